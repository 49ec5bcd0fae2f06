"""``/_/image/<slug>``: the signed, header-free links to any image of any source."""

import time

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

from toshokan.core.cache_control import image_cache_control
from toshokan.core.http import enter
from toshokan.core.images.pictures import clamp_width
from toshokan.errors import InvalidRequest
from toshokan.sdk.pictures import Picture
from toshokan.sdk.urls import host_path

#: The longest image URL a signed link may carry.
MAX_URL_LENGTH = 4096


# -- the signed image route -------------------------------------------------------------


async def signed_image(request: Request) -> Response:
    """``GET /_/image/<slug>?u=<url>[&w=<width>]&exp=&sig=``: any image of any source, no headers."""
    slug = request.path_params["source"]
    entry = await enter(request, slug)
    core, visit = entry.core, entry.visit
    assert visit is not None  # a source was named
    query = dict(request.query_params)
    url = query.get("u", "")
    if not url or len(url) > MAX_URL_LENGTH:
        raise InvalidRequest("The image link has no usable URL.")
    until = await visit.admit_by_link(lambda: core.images.verify(slug, query))
    picture = await visit.image(url, width=clamp_width(query.get("w")))
    max_age = max(0, min(until - int(time.time()), 86400))
    return image_response(picture, f"private, max-age={max_age}")


def image_response(picture: Picture, cache_control: str) -> Response:
    """The picture with its caching; ``nosniff`` is the edge's, on every answer, once."""
    return Response(
        picture.data, media_type=picture.media_type, headers={"Cache-Control": cache_control}
    )


def picture_response(picture: Picture, *, private: bool) -> Response:
    """A page or cover for a reader, cached as :func:`image_cache_control` says."""
    return image_response(picture, image_cache_control(private))


def image_mount() -> Mount:
    """``/_/image``: the signed, header-free image links of :meth:`ImagePipeline.signed_url`."""
    return Mount(host_path("image"), routes=[Route("/{source}", signed_image, methods=["GET"])])
