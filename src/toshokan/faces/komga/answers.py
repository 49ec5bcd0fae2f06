"""How the face answers: JSON of Komga's DTOs, pictures, and the reader-scoped cache headers."""

from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, TypeAdapter
from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import host_path
from toshokan.core.cache_control import PRIVATE_NO_CACHE
from toshokan.core.http import enter
from toshokan.core.images import Picture, picture_response
from toshokan.core.progress import ChapterRef
from toshokan.errors import NotFound
from toshokan.faces.komga.auth import PASSING, SIGNING, set_session
from toshokan.faces.komga.content import Reading
from toshokan.faces.komga.ids import book_of

PREFIX = host_path("komga")
_LIST: TypeAdapter[list[Any]] = TypeAdapter(list[Any])
#: Every answer shows the reader's own progress: never kept by a shared cache.
PRIVATE = PRIVATE_NO_CACHE

Handler = Callable[[Request, Reading], Awaitable[Response]]
#: A handler of a request about one book, handed the book its id names.
BookHandler = Callable[[Request, Reading, ChapterRef], Awaitable[Response]]
Endpoint = Callable[[Request], Awaitable[Response]]


def as_json(value: BaseModel | Sequence[BaseModel] | Sequence[str]) -> Response:
    if isinstance(value, BaseModel):
        body = value.model_dump_json().encode()
    else:
        body = _LIST.dump_json(list(value))
    return Response(body, media_type="application/json", headers={"Cache-Control": PRIVATE})


def no_content() -> Response:
    return Response(status_code=204, headers={"Cache-Control": PRIVATE})


def picture(image: Picture) -> Response:
    return picture_response(image, private=True)


def komga_route(handler: Handler) -> Endpoint:
    """Tell the reader (setting the session cookie on a Basic sign-in), then answer; every
    refusal in Komga's shape."""

    async def endpoint(request: Request) -> Response:
        return await _answered(request, None, lambda reading: handler(request, reading))

    return endpoint


def book_route(handler: BookHandler) -> Endpoint:
    """As :func:`komga_route`, for a request about one book: its id read once, and its source
    entered with the reader, so the page an app reads asks the core once for both. An id
    that names nothing is 404 once the reader is told, as on every other route."""

    async def endpoint(request: Request) -> Response:
        try:
            ref = book_of(request.path_params["id"])
        except NotFound as missing:
            unknown = missing

            async def refused(_: Reading) -> Response:
                raise unknown

            return await _answered(request, None, refused)
        return await _answered(request, ref.source, lambda reading: handler(request, reading, ref))

    return endpoint


async def _answered(
    request: Request, source: str | None, answer: Callable[[Reading], Awaitable[Response]]
) -> Response:
    entry = await enter(request, source, signing=SIGNING, passing=PASSING)
    reader, token = entry.reader, entry.session
    assert reader is not None  # a signing was given
    response = await answer(Reading(entry.core, entry.caller, reader, entry.device, entry.visit))
    if token is not None:
        # Under the address the app typed, a proxy's path prefix included.
        face = urlsplit(entry.urls.face("komga")).path
        set_session(request, response, token, face)
    return response
