"""Exception handlers: every failure the router or a handler raises becomes the Error object."""

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from toshokan.core.http import authenticate
from toshokan.errors import HostError
from toshokan.faces.spec.responses import error_response, host_error_response


def _authenticating(request: Request) -> bool:
    """Whether the request reached the authenticate endpoint (on the spec's face or another),
    whose failures take the form ``{success: false, error}``."""
    return request.scope.get("endpoint") is authenticate


async def on_host_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HostError)
    return host_error_response(error, auth_form=_authenticating(request))


async def on_http_exception(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    path = request.url.path[:200]
    if error.status_code == 404:
        return error_response("NOT_FOUND", f"Nothing is at {path}.", 404)
    if error.status_code == 405:
        return error_response(
            "INVALID_REQUEST",
            f"{request.method} is not allowed on {path}.",
            405,
            dict(error.headers or {}),
        )
    code = "INVALID_REQUEST" if error.status_code < 500 else "INTERNAL_ERROR"
    return error_response(code, str(error.detail), error.status_code)


async def on_unexpected(request: Request, error: Exception) -> Response:
    """A bug: the Error object without internals; the edge logs it."""
    return error_response(
        "INTERNAL_ERROR",
        "The host failed to answer this request.",
        500,
        auth_form=_authenticating(request),
    )


EXCEPTION_HANDLERS = {
    HostError: on_host_error,
    HTTPException: on_http_exception,
    Exception: on_unexpected,
}
