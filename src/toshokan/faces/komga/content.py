"""Everything this face asks of the core, in one place: sources, works, chapters, pages, images.

The rest of the face only shapes answers; these calls are the whole of its
traffic with the core, so they can move with it as a unit.

A Komga request carries the host's reader credentials, not a source's; the
face says so (:data:`toshokan.faces.komga.auth.PASSING`) and the core passes
them on that way (:mod:`toshokan.core.passing`). A source open to everyone is asked with none of them (its answers stay shared
in the cache); a source that accepts the host's readers is asked with all of
them, the session cookie included, for the core to check; a source locked with
its own ``basic`` account receives the request's Basic header, so it opens when
that account is the one the reader typed, and otherwise refuses, and is not listed.
"""

import asyncio
from dataclasses import dataclass
from typing import Any

from toshokan.core import Caller, Core, Visit
from toshokan.core.credentials import basic_credentials
from toshokan.core.follows import Follow
from toshokan.core.follows.found import Update
from toshokan.core.images import THUMBNAIL_WIDTH, Picture, as_png
from toshokan.core.progress import ChapterRef, Position
from toshokan.errors import (
    ChapterNotFound,
    HostError,
    InvalidCredentials,
    RateLimited,
    UpstreamError,
)
from toshokan.faces.komga.auth import PASSING
from toshokan.models import (
    Chapter,
    FilterKey,
    Manga,
    SearchResponse,
)

#: Of one listing's series, at most this many have their chapters asked for at once.
CHAPTER_LISTS_AT_ONCE = 8


@dataclass(frozen=True)
class Reading:
    """One request to the face: the core, who reads, as whom the sources are asked."""

    core: Core
    caller: Caller
    reader: str
    #: The app, as its ``User-Agent`` names it: kept with each place the reader records.
    device: str
    #: The source a request about one book is about, entered with the reader (``book_route``).
    visit: Visit | None = None

    @property
    def signed_as(self) -> str:
        """The name sent with Basic, if any (on a host without readers, no one checks it)."""
        basic = basic_credentials(self.caller.headers)
        return "" if basic is None else basic[0]


async def visit_of(reading: Reading, slug: str) -> Visit:
    """One source, as this reader may open it (401 from the core when it stays locked)."""
    if reading.visit is not None and reading.visit.slug == slug:
        return reading.visit
    return await reading.core.visit(slug, reading.caller, PASSING)


async def opened_visits(reading: Reading) -> list[Visit]:
    """The serving sources this reader can open: every open one, and each locked one whose
    check passes with what the request sent (decided once per half minute by the core)."""
    found = [await visit_of(reading, hosted.slug) for hosted in reading.core.sources.serving()]
    opened = await asyncio.gather(*(_opens(reading, visit) for visit in found))
    return [visit for visit, opens in zip(found, opened, strict=True) if opens]


async def _opens(reading: Reading, visit: Visit) -> bool:
    if not visit.config.auth.required:
        return True
    try:
        await visit.access()
    except (InvalidCredentials, RateLimited, UpstreamError):
        return False
    return True


def holds_files(reading: Reading, visit: Visit) -> bool:
    """Whether the source's chapters are files here: asking about each reads its own index."""
    return visit.offers_downloads


async def known_values(reading: Reading, visit: Visit, key: FilterKey) -> list[str]:
    """What the source's ``key`` filter can match, when it declares the filter and knows them."""
    if key not in visit.config.search.filters:
        return []
    return await visit.filter_values(key)


async def search(reading: Reading, visit: Visit, body: dict[str, Any]) -> SearchResponse:
    return (await visit.search(body)).value


async def manga(reading: Reading, visit: Visit, slug: str) -> Manga:
    return (await visit.manga(slug)).value


async def chapters(reading: Reading, visit: Visit, manga_slug: str) -> list[Chapter]:
    return (await visit.chapters(manga_slug)).value


@dataclass(frozen=True)
class SeriesProgress:
    """A work's chapters, and the reader's places in them by chapter slug."""

    chapters: list[Chapter]
    places: dict[str, Position]


async def progress_of(
    reading: Reading, visit: Visit, manga_slugs: list[str]
) -> list[SeriesProgress | None]:
    """Each work's chapters and the reader's places, None for a work whose chapters could not
    be listed (gone, or its source down or out of time: the request's one deadline holds)."""
    limit = asyncio.Semaphore(CHAPTER_LISTS_AT_ONCE)

    async def one(manga_slug: str) -> SeriesProgress | None:
        async with limit:
            try:
                listed, places = await asyncio.gather(
                    chapters(reading, visit, manga_slug),
                    positions(reading, visit.slug, manga_slug),
                )
            except HostError as refused:
                if refused.status == 500:
                    raise
                return None
        return SeriesProgress(listed, places)

    return list(await asyncio.gather(*(one(slug) for slug in manga_slugs)))


async def chapter(reading: Reading, visit: Visit, ref: ChapterRef) -> tuple[Chapter, list[Chapter]]:
    """The chapter a book is, and every chapter of its work (a book's number is its place)."""
    every = await chapters(reading, visit, ref.manga)
    for found in every:
        if found.slug == ref.chapter:
            return found, every
    raise ChapterNotFound()


async def page_urls(reading: Reading, visit: Visit, ref: ChapterRef) -> list[str]:
    return await visit.page_list(ref.manga, ref.chapter)


async def page_counts(
    reading: Reading, visit: Visit, manga_slug: str, chapters: list[Chapter]
) -> dict[str, int]:
    """The page counts of ``chapters`` by slug: asked of a source whose chapters are files
    here (each a read of its own index), else those the source listed with its chapters."""
    if not holds_files(reading, visit):
        return {c.slug: c.pages for c in chapters if c.pages}

    async def count(chapter: Chapter) -> int:
        ref = ChapterRef(visit.slug, manga_slug, chapter.slug)
        try:
            return len(await page_urls(reading, visit, ref))
        except HostError:  # gone since the list was made: its count is unknown
            return 0

    counted = await asyncio.gather(*(count(chapter) for chapter in chapters))
    return dict(zip((c.slug for c in chapters), counted, strict=True))


async def page_image(
    reading: Reading, visit: Visit, ref: ChapterRef, index: int, *, png: bool
) -> tuple[int, Picture | None]:
    """The book's page count, and its page ``index`` (from 0) as JPEG (what the page list
    declares), or as PNG when the app asks to convert; None when the book has no such page."""
    count, picture = await visit.page(ref.manga, ref.chapter, index, as_jpeg=True)
    if picture is not None and png:
        picture = await asyncio.to_thread(as_png, picture)
    return count, picture


async def first_page_small(reading: Reading, visit: Visit, ref: ChapterRef) -> Picture | None:
    """A book's first page, small: its thumbnail; None when it has no pages."""
    _, picture = await visit.page(ref.manga, ref.chapter, 0, width=THUMBNAIL_WIDTH)
    return picture


async def thumbnail(reading: Reading, visit: Visit, url: str) -> Picture:
    return await visit.image(url, width=THUMBNAIL_WIDTH)


async def positions(reading: Reading, source: str, manga_slug: str) -> dict[str, Position]:
    return await reading.core.progress.apositions(reading.reader, source, manga_slug)


async def recent(reading: Reading, limit: int) -> list[tuple[ChapterRef, Position]]:
    """The reader's ``limit`` most recently moved places, newest first."""
    return await reading.core.progress.arecent(reading.reader, limit)


async def position(reading: Reading, ref: ChapterRef) -> Position | None:
    return await reading.core.progress.aposition(reading.reader, ref)


async def record(reading: Reading, ref: ChapterRef, place: Position) -> None:
    await reading.core.progress.arecord(reading.reader, ref, place)


async def forget(reading: Reading, ref: ChapterRef) -> None:
    await reading.core.progress.aforget(reading.reader, ref)


async def follows(reading: Reading) -> list[Follow]:
    """The series the reader follows, by title."""
    return await reading.core.follows.follows_of(reading.reader)


async def updates(
    reading: Reading, limit: int, offset: int = 0, *, unread_only: bool = False
) -> list[Update]:
    """The chapters checks found new to the reader, the latest found first."""
    return await reading.core.follows.updates(
        reading.reader, limit, offset, unread_only=unread_only
    )
