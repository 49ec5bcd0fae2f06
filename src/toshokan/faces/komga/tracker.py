"""Mihon's Komga tracker: ``/api/v2/series/{id}/read-progress/tachiyomi``, read and moved.

Mihon tracks chapters by number, so here a number counts once however many
versions (groups, languages) the source has of it, and it is read when any
of its versions is. ``lastReadContinuousNumberSort`` is the last number of
the unbroken run of read numbers from the first (0 before any), as Komga
computes it; ``PUT`` marks every version of every number up to
``lastBookNumberSortRead`` read, and unmarks nothing, as Komga does. The
places it writes are the progress store's, so the web reader, OPDS and
KOReader see them, and what they record shows here.
"""

import asyncio
import time
from collections import defaultdict
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import Visit
from toshokan.core.bodies import read_json
from toshokan.core.progress import ChapterRef, Position
from toshokan.errors import InvalidRequest
from toshokan.faces.komga import content
from toshokan.faces.komga.answers import as_json, no_content
from toshokan.faces.komga.content import Reading
from toshokan.faces.komga.dto import TachiyomiReadProgressV2Dto
from toshokan.faces.komga.ids import series_of
from toshokan.models import Chapter
from toshokan.models.search import MAX_FILTER_NUMBER


class ReadProgressUpdateV2(BaseModel):
    """Komga's ``TachiyomiReadProgressUpdateV2Dto``."""

    model_config = ConfigDict(allow_inf_nan=False)
    lastBookNumberSortRead: float


@dataclass(frozen=True)
class SeriesProgress:
    """A series' chapters by number (each number's versions), and the reader's places in them."""

    visit: Visit
    versions: dict[float, list[Chapter]]
    places: dict[str, Position]


async def _progress(reading: Reading, source: str, manga_slug: str) -> SeriesProgress:
    visit = await content.visit_of(reading, source)
    chapters, places = await asyncio.gather(
        content.chapters(reading, visit, manga_slug),
        content.positions(reading, source, manga_slug),
    )
    versions: dict[float, list[Chapter]] = defaultdict(list)
    for chapter in chapters:
        versions[float(chapter.number)].append(chapter)
    return SeriesProgress(visit, dict(versions), places)


async def tachiyomi_progress(request: Request, reading: Reading) -> Response:
    source, manga_slug = series_of(request.path_params["id"])
    progress = await _progress(reading, source, manga_slug)

    def state(versions: list[Chapter]) -> str:
        found = [progress.places[c.slug] for c in versions if c.slug in progress.places]
        if any(p.finished for p in found):
            return "read"
        return "started" if found else "unread"

    states = {number: state(versions) for number, versions in progress.versions.items()}
    continuous = 0.0
    for number in sorted(states):
        if states[number] != "read":
            break
        continuous = number
    counted = list(states.values())
    return as_json(
        TachiyomiReadProgressV2Dto(
            booksCount=len(counted),
            booksReadCount=counted.count("read"),
            booksUnreadCount=counted.count("unread"),
            booksInProgressCount=counted.count("started"),
            lastReadContinuousNumberSort=continuous,
            maxNumberSort=max(states, default=0.0),
        )
    )


async def mark_tachiyomi_progress(request: Request, reading: Reading) -> Response:
    try:
        update = ReadProgressUpdateV2.model_validate(await read_json(request))
    except ValidationError:
        raise InvalidRequest("Send lastBookNumberSortRead, a number.") from None
    if abs(update.lastBookNumberSortRead) > MAX_FILTER_NUMBER:
        raise InvalidRequest("lastBookNumberSortRead is out of range.")
    source, manga_slug = series_of(request.path_params["id"])
    progress = await _progress(reading, source, manga_slug)
    device, now = reading.device, time.time()
    for number, versions in progress.versions.items():
        if number > update.lastBookNumberSortRead:
            continue
        for chapter in versions:
            kept = progress.places.get(chapter.slug)
            if kept is not None and kept.finished:
                continue
            ref = ChapterRef(source, manga_slug, chapter.slug)
            pages = await _pages(reading, progress.visit, ref, chapter.pages, kept)
            await content.record(reading, ref, Position(pages - 1, pages, True, now, device=device))
    return no_content()


async def _pages(
    reading: Reading,
    visit: Visit,
    ref: ChapterRef,
    known: int | None,
    kept: Position | None,
) -> int:
    """A chapter's page count, so its last page is the place other faces show as read: known
    already, or asked of a source whose chapters are files here (reading its own index); an
    upstream source is not asked once per chapter marked, so its count may stay unknown (1)."""
    if known:
        return known
    if kept is not None and kept.pages:
        return kept.pages
    if content.holds_files(reading, visit):
        return max(len(await content.page_urls(reading, visit, ref)), 1)
    return 1
