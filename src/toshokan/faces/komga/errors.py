"""Refusals in the shape Komga's clients see from it: Spring Boot's error body.

Komga answers an error as Spring does, ``{timestamp, status, error, message,
path}``; the apps react to the status (a 401 makes Mihon's client retry once
with Basic, Aidoku asks to sign in again; a 404 says the series or book is
gone) and some show the message. A 401 always carries ``WWW-Authenticate:
Basic``, the challenge OkHttp's authenticator and browsers answer.
"""

import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from http import HTTPStatus

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core.cache_control import NO_STORE
from toshokan.core.credentials import basic_challenge
from toshokan.errors import HostError

Endpoint = Callable[[Request], Awaitable[Response]]


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
        realm = request.app.state.core.settings.host.name
        headers.setdefault("WWW-Authenticate", basic_challenge(realm))
    return Response(json.dumps(body), status, headers=headers, media_type="application/json")


def komga_endpoint(handler: Endpoint) -> Endpoint:
    """The handler, with every refusal of the host (its own or a source's) in Komga's shape."""

    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request)
        except HostError as refused:
            if refused.status == 500:
                raise  # a bug: the host's own handler logs it and answers 500
            return error_response(request, refused.status, refused.message, refused.headers)

    return endpoint
