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

from toshokan.core.images import picture_response
from toshokan.core.progress import ChapterRef, Position
from toshokan.errors import NotFound
from toshokan.faces.opds.context import CatalogueVisit


async def page_image(request: Request, visit: CatalogueVisit) -> Response:
    """Page ``n`` (0-based, as PSE counts) as JPEG, at most ``maxWidth`` wide."""
    params = request.path_params
    number = params["number"]
    if not (number.isascii() and number.isdigit()) or len(number) > 6:
        raise NotFound("A page number is a whole number from 0.")
    pages = await visit.source_visit.chapter_pages(params["manga"], params["chapter"])
    index, count = int(number), pages.count
    if index >= count:
        raise NotFound(f"This chapter has pages 0 to {count - 1}.")
    ref = ChapterRef(visit.slug, params["manga"], params["chapter"])
    read = Position(index, count, index + 1 >= count, time.time(), device=visit.entry.device)
    picture, _ = await asyncio.gather(
        pages.image(index, width=request.query_params.get("maxWidth"), as_jpeg=True),
        visit.core.progress.arecord(visit.reader, ref, read, inferred=True),
    )
    return picture_response(picture, private=visit.private)
