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
from toshokan.faces.komga.auth import SIGNING, set_session
from toshokan.faces.komga.content import Reading

PREFIX = host_path("komga")
_LIST: TypeAdapter[list[Any]] = TypeAdapter(list[Any])
#: Every answer shows the reader's own progress: never kept by a shared cache.
PRIVATE = PRIVATE_NO_CACHE

Handler = Callable[[Request, Reading], Awaitable[Response]]


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


def komga_route(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """Tell the reader (setting the session cookie on a Basic sign-in), then answer; every
    refusal in Komga's shape."""

    async def endpoint(request: Request) -> Response:
        entry = await enter(request, signing=SIGNING)
        reader, token = entry.reader, entry.session
        assert reader is not None  # a signing was given
        response = await handler(request, Reading(entry.core, entry.caller, reader, entry.device))
        if token is not None:
            # Under the address the app typed, a proxy's path prefix included.
            face = urlsplit(entry.urls.face("komga")).path
            set_session(request, response, token, face)
        return response

    return endpoint
