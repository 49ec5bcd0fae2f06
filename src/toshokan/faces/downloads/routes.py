"""The downloads API's routes, under ``/_/downloads``: the queue as one person sees it, and
steering it, over the core's download queue.

A reader is told as on the follows API (the web reader's session cookie, HTTP
Basic, ``X-API-Key``; the implicit reader on a host without readers). A reader
sees, steers, pauses and resumes the downloads of the series they keep; an
operator (``[keep] operators``) the whole queue, which they alone pause and resume.
"""

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from toshokan.core.host_api import answer, body_of, entered, number
from toshokan.errors import InvalidRequest
from toshokan.faces.downloads.shapes import (
    Pause,
    Steer,
    download_body,
    listing_body,
    queue_body,
)

PREFIX = "/_/downloads"
Handler = Callable[[Request], Awaitable[Response]]


async def listing(request: Request) -> Response:
    entry, reader = await entered(request)
    limit = number(request, "limit", 100, 1, 500)
    offset = number(request, "offset", 0, 0, 100_000)
    mine = request.query_params.get("mine", "0")
    if mine not in ("0", "1"):
        raise InvalidRequest("mine is 1 (the downloads of the series you keep) or 0.")
    found = await entry.core.downloads.listing(
        reader, everyone=mine == "0", limit=limit, offset=offset
    )
    return answer(listing_body(found))


async def one(request: Request) -> Response:
    entry, reader = await entered(request)
    found = await entry.core.downloads.mine(reader, request.path_params["download"])
    return answer(download_body(found))


async def steer(request: Request) -> Response:
    entry, reader = await entered(request)
    body = await body_of(request, Steer)
    found = await entry.core.downloads.steer(reader, request.path_params["download"], body.action)
    return answer(download_body(found))


async def retry_failed(request: Request) -> Response:
    entry, reader = await entered(request)
    return answer({"retried": await entry.core.downloads.retry_failed(reader)})


async def pause(request: Request) -> Response:
    entry, reader = await entered(request)
    body = await body_of(request, Pause)
    downloads = entry.core.downloads
    change = downloads.pause if body.paused else downloads.resume
    state = await change(reader, own=body.own)
    return answer(queue_body(state))


def downloads_routes() -> list[BaseRoute]:
    def route(path: str, handler: Handler, method: str) -> Route:
        return Route(f"{PREFIX}{path}", handler, methods=[method])

    return [
        route("", listing, "GET"),
        route("/queue", pause, "PUT"),
        route("/retry", retry_failed, "POST"),
        route("/{download}", one, "GET"),
        route("/{download}", steer, "POST"),
    ]
