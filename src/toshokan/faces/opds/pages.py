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

from toshokan.core.cache_control import image_cache_control
from toshokan.core.images import clamp_width, image_response
from toshokan.core.progress import ChapterRef, Position, device_of
from toshokan.errors import NotFound
from toshokan.faces.opds.context import CatalogueVisit


async def page_image(request: Request, visit: CatalogueVisit) -> Response:
    """Page ``n`` (0-based, as PSE counts) as JPEG, at most ``maxWidth`` wide."""
    params = request.path_params
    number = params["number"]
    if not (number.isascii() and number.isdigit()) or len(number) > 6:
        raise NotFound("A page number is a whole number from 0.")
    urls = await visit.source_visit.page_list(params["manga"], params["chapter"])
    index = int(number)
    if index >= len(urls):
        raise NotFound(f"This chapter has pages 0 to {len(urls) - 1}.")
    width = clamp_width(request.query_params.get("maxWidth"))
    ref = ChapterRef(visit.slug, params["manga"], params["chapter"])
    read = Position(
        index, len(urls), index + 1 >= len(urls), time.time(), device=device_of(request.headers)
    )
    picture, _ = await asyncio.gather(
        visit.source_visit.image(urls[index], width=width, as_jpeg=True),
        visit.core.progress.arecord(visit.reader, ref, read, inferred=True),
    )
    cache = image_cache_control(visit.private)
    return image_response(picture, cache)
