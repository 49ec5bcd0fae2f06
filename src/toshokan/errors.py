"""Errors that become the spec's Error object.

Raise one of these anywhere (adapter, SDK, host) and the HTTP layer answers
with its status and ``{"error": {"code", "message"}}``. Messages are shown to
clients, so they never carry credentials or internals.
"""

import math
from typing import Any, ClassVar


class HostError(Exception):
    """A failure with a machine-readable code and an HTTP status."""

    code: ClassVar[str] = "INTERNAL_ERROR"
    status: ClassVar[int] = 500
    default_message: ClassVar[str] = "The host failed to answer this request."

    def __init__(self, message: str | None = None, *, headers: dict[str, str] | None = None):
        self.message = message or self.default_message
        self.headers = headers or {}
        super().__init__(self.message)


class NotFound(HostError):
    code, status, default_message = "NOT_FOUND", 404, "Nothing is at this path."


class SourceNotFound(NotFound):
    code, default_message = "SOURCE_NOT_FOUND", "No source has this slug."


class MangaNotFound(NotFound):
    code, default_message = "MANGA_NOT_FOUND", "The source has no manga with this slug."


class ChapterNotFound(NotFound):
    code, default_message = "CHAPTER_NOT_FOUND", "The manga has no chapter with this slug."


class InvalidRequest(HostError):
    code, status, default_message = "INVALID_REQUEST", 400, "The request is malformed."


class PayloadTooLarge(InvalidRequest):
    status, default_message = 413, "The request body is too large."


class MethodNotAllowed(InvalidRequest):
    status, default_message = 405, "This path does not accept this method."


class Conflict(HostError):
    code, status, default_message = (
        "CONFLICT",
        409,
        "The request conflicts with what happened already.",
    )


class MissingFields(HostError):
    code, status, default_message = "MISSING_FIELDS", 400, "Required fields are missing."


class InvalidCredentials(HostError):
    code, status, default_message = (
        "INVALID_CREDENTIALS",
        401,
        "Authentication is missing or invalid.",
    )


class RateLimited(HostError):
    code, status, default_message = "RATE_LIMITED", 429, "Too many requests; try again later."

    def __init__(self, message: str | None = None, *, retry_after: float | None = None):
        headers = {}
        if retry_after is not None:
            # Rounded up: a client that waits what it is told never comes back too early.
            headers["Retry-After"] = str(max(1, math.ceil(retry_after)))
        super().__init__(message, headers=headers)
        self.retry_after = retry_after


class UpstreamError(HostError):
    code, status, default_message = "UPSTREAM_ERROR", 502, "The upstream answered with an error."


class UpstreamTimeout(HostError):
    code, status, default_message = "UPSTREAM_TIMEOUT", 504, "The upstream did not answer in time."


def error_body(code: str, message: str, *, auth_form: bool = False) -> dict[str, Any]:
    """The Error object, or the authenticate endpoint's failure form
    ``{"success": false, "error": ...}``: every failure body the host sends is built here."""
    error = {"error": {"code": code, "message": message}}
    return {"success": False, **error} if auth_form else error
