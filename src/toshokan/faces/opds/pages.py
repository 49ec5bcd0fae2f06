"""One page image of a chapter, as OPDS-PSE asks for it: 0-based, JPEG as the stream link says.

The pages come from the core's image pipeline (page list remembered per
caller, images answered as upright JPEG, the type the stream link declares,
resized to ``maxWidth``, cached): this face only maps the reader's numbering
onto it. A page streamed is a page read: the reader's position moves to it,
only forward (PSE readers preload pages ahead, and go back to look again),
written while the image is rendered so the answer waits for neither twice.
"""

import asyncio
import time

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core.images import clamp_width, image_response
from toshokan.core.progress import ChapterRef, Position
from toshokan.errors import NotFound
from toshokan.faces.opds.context import Ctx

#: The longest device name kept with a position.
MAX_DEVICE = 128


async def page_image(request: Request, ctx: Ctx) -> Response:
    """Page ``n`` (0-based, as PSE counts) as JPEG, at most ``maxWidth`` wide."""
    params = request.path_params
    number = params["number"]
    if not (number.isascii() and number.isdigit()) or len(number) > 6:
        raise NotFound("A page number is a whole number from 0.")
    urls = await ctx.visit.page_list(params["manga"], params["chapter"])
    index = int(number)
    if index >= len(urls):
        raise NotFound(f"This chapter has pages 0 to {len(urls) - 1}.")
    width = clamp_width(request.query_params.get("maxWidth"))
    ref = ChapterRef(ctx.slug, params["manga"], params["chapter"])
    read = Position(index, len(urls), index + 1 >= len(urls), time.time(), device=_device(request))
    picture, _ = await asyncio.gather(
        ctx.visit.image(urls[index], width=width, as_jpeg=True),
        ctx.core.progress.arecord(ctx.reader, ref, read, inferred=True),
    )
    cache = "private, max-age=3600" if ctx.private else "public, max-age=3600"
    return image_response(picture, cache)


def _device(request: Request) -> str:
    """The reading app, as its User-Agent names it (bounded: it is stored with the position)."""
    return request.headers.get("user-agent", "")[:MAX_DEVICE]
