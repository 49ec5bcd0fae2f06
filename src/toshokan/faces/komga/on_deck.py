"""``GET /api/v1/books/ondeck``: what to read next, as Komga's home page and Komelia show it.

Komga's *on deck* is, for every series the reader started and left between
books (at least one book read, none in progress, some unread), the first
unread book, the series read most recently first. The series looked at are
those of the reader's most recent places in the progress store every face
writes, at most :data:`SERIES_LOOKED_AT` of them, then the series they follow
in which checks found chapters they have not read (a new chapter of a series
read to its end puts it on deck): each has its chapters listed (free for the
local library, one cached request per series upstream).
"""

import asyncio

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import Visit
from toshokan.core.progress import ChapterRef
from toshokan.faces.komga import content
from toshokan.faces.komga.answers import as_json
from toshokan.faces.komga.content import Reading, SeriesProgress
from toshokan.faces.komga.dto import BookDto, page_of
from toshokan.faces.komga.dto_of import book_of_chapter, reading_order
from toshokan.faces.komga.ids import library_id
from toshokan.faces.komga.listing import page_params, series_query

#: The most series one answer looks at: the reader's most recently read ones.
SERIES_LOOKED_AT = 50
#: Places read to find them: a series' places come together, many to a series.
PLACES_LOOKED_AT = 1000


async def _series_read_lately(reading: Reading, visits: dict[str, Visit]) -> list[tuple[str, str]]:
    """The (source, work) pairs of the reader's latest places, newest first, in ``visits``."""
    seen: dict[tuple[str, str], None] = {}
    for ref, _ in await content.recent(reading, PLACES_LOOKED_AT):
        if ref.source in visits:
            seen.setdefault((ref.source, ref.manga), None)
        if len(seen) == SERIES_LOOKED_AT:
            break
    return list(seen)


def _next_unread(progress: SeriesProgress) -> int | None:
    """The place (from 0, in reading order) of the series' next book, when it is on deck."""
    ordered = reading_order(progress.chapters)
    found = [progress.places.get(chapter.slug) for chapter in ordered]
    if any(place is not None and not place.finished for place in found):
        return None  # a book in progress: the series is to keep reading, not on deck
    if not any(place is not None for place in found):
        return None
    return next((n for n, place in enumerate(found) if place is None), None)


async def _book(
    reading: Reading, visit: Visit, manga_slug: str, progress: SeriesProgress, place: int
) -> BookDto:
    """The book at ``place`` (from 0) in the series' reading order, not yet read."""
    chapter = reading_order(progress.chapters)[place]
    work, counts = await asyncio.gather(
        content.manga(reading, visit, manga_slug),
        content.page_counts(reading, visit, manga_slug, [chapter]),
    )
    ref = ChapterRef(visit.slug, manga_slug, chapter.slug)
    return book_of_chapter(ref, chapter, place + 1, work.title, counts.get(chapter.slug), None)


async def on_deck(request: Request, reading: Reading) -> Response:
    page, size = page_params(request.query_params)
    wanted = series_query(request.query_params).libraries
    visits = {
        visit.slug: visit
        for visit in await content.opened_visits(reading)
        if not wanted or library_id(visit.slug) in wanted
    }
    series = await _series_read_lately(reading, visits)
    with_news = [
        (follow.followed.series.source, follow.followed.series.manga)
        for follow in await content.follows(reading)
        if follow.unread and follow.followed.series.source in visits
    ]
    series = list(dict.fromkeys(series + with_news[:SERIES_LOOKED_AT]))
    by_source: dict[str, list[str]] = {}
    for source, manga_slug in series:
        by_source.setdefault(source, []).append(manga_slug)
    found: dict[tuple[str, str], SeriesProgress | None] = {}
    for source, slugs in by_source.items():
        found_progress = await content.progress_of(reading, visits[source], slugs)
        found.update(((source, slug), r) for slug, r in zip(slugs, found_progress, strict=True))
    every = [
        (visits[source], manga_slug, progress, place)
        for source, manga_slug in series
        if (progress := found[source, manga_slug]) is not None
        and (place := _next_unread(progress)) is not None
    ]
    shown = await asyncio.gather(
        *(_book(reading, *deck) for deck in every[page * size : (page + 1) * size])
    )
    return as_json(
        page_of(list(shown), page, size, last=(page + 1) * size >= len(every), total=len(every))
    )
