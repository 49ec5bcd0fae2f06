"""One page image of a chapter, as OPDS-PSE asks for it: 0-based, JPEG as the stream link says.

The pages come from the core's image pipeline (page list remembered per
caller, images answered as upright JPEG, the type the stream link declares,
resized to ``maxWidth``, cached): this face only maps the reader's numbering
onto it.
"""

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core.images import clamp_width, image_response, images_of
from toshokan.errors import NotFound
from toshokan.faces.opds.context import Ctx


async def page_image(request: Request, ctx: Ctx) -> Response:
    """Page ``n`` (0-based, as PSE counts) as JPEG, at most ``maxWidth`` wide."""
    params = request.path_params
    number = params["number"]
    if not (number.isascii() and number.isdigit()) or len(number) > 6:
        raise NotFound("A page number is a whole number from 0.")
    pipeline = images_of(ctx.core)
    urls = await pipeline.page_urls(ctx.slug, params["manga"], params["chapter"], ctx.caller)
    index = int(number)
    if index >= len(urls):
        raise NotFound(f"This chapter has pages 0 to {len(urls) - 1}.")
    width = clamp_width(request.query_params.get("maxWidth"))
    picture = await pipeline.render(
        ctx.hosted, urls[index], ctx.caller.base_url, width=width, as_jpeg=True
    )
    cache = "private, max-age=3600" if ctx.private else "public, max-age=3600"
    return image_response(picture, cache)
