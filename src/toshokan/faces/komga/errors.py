"""Refusals in the shape Komga's clients see from it: Spring Boot's error body.

Komga answers an error as Spring does, ``{timestamp, status, error, message,
path}``; the apps react to the status (a 401 makes Mihon's client retry once
with Basic, Aidoku asks to sign in again; a 404 says the series or book is
gone) and some show the message. A 401 always carries ``WWW-Authenticate:
Basic``, the challenge OkHttp's authenticator and browsers answer.
"""

import json
from datetime import UTC, datetime
from http import HTTPStatus

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core.cache_control import NO_STORE
from toshokan.core.credentials import basic_challenge
from toshokan.core.http import entry_of
from toshokan.errors import HostError


def error_response(
    request: Request, status: int, message: str, headers: dict[str, str]
) -> Response:
    moment = datetime.now(UTC)
    body = {
        "timestamp": moment.strftime("%Y-%m-%dT%H:%M:%S.")
        + f"{moment.microsecond // 1000:03d}+00:00",
        "status": status,
        "error": HTTPStatus(status).phrase,
        "message": message,
        "path": request.url.path,
    }
    headers = {**headers, "Cache-Control": NO_STORE}
    if status == 401:
        realm = entry_of(request).core.settings.host.name
        headers.setdefault("WWW-Authenticate", basic_challenge(realm))
    return Response(json.dumps(body), status, headers=headers, media_type="application/json")


async def on_host_error(request: Request, error: Exception) -> Response | None:
    """Every refusal of the host (its own or a source's) under the face, in Komga's shape; a
    bug (500) is left to the host's own handler, which logs it."""
    assert isinstance(error, HostError)
    if error.status == 500:
        return None
    return error_response(request, error.status, error.message, error.headers)


#: The face's handlers: they answer the paths under its prefix.
EXCEPTION_HANDLERS = {HostError: on_host_error}
