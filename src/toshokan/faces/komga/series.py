"""Libraries, series and the lists the extension's filters load: the sources and their works.

A library is a serving source the reader can open; a listing over several
asks each the same page at once and joins them (a page holds up to ``size``
series from each, and is the last when none has more), since sources cannot
be merged into one order without reading them whole. A source that fails or
stays locked drops out of a listing over several rather than failing it.

``totalElements`` is true where the host knows it cheaply: a source's count is
known on its last page, and a library whose files are here is counted by
asking for pages of its index (:mod:`toshokan.core.counting`). An upstream
source's count would cost upstream requests, and a read-status filter sees
only the pages asked for; then the count is what the pages so far imply (one
more than shown while more follow), as before.
"""

import asyncio
from collections.abc import Awaitable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import Visit
from toshokan.core.bodies import read_json
from toshokan.core.counting import count_results
from toshokan.core.progress import Position
from toshokan.errors import InvalidCredentials, NotFound, RateLimited, UpstreamError
from toshokan.faces.komga import content, following
from toshokan.faces.komga.answers import as_json, picture
from toshokan.faces.komga.conditions import series_search
from toshokan.faces.komga.content import Reading, SeriesProgress
from toshokan.faces.komga.dto import (
    AuthorDto,
    LibraryDto,
    PageWrapper,
    SeriesDto,
    UserDto,
    page_of,
)
from toshokan.faces.komga.dto_of import read_status, series_of_entry, series_of_manga
from toshokan.faces.komga.ids import (
    library_id,
    series_of,
    source_of_library,
)
from toshokan.faces.komga.listing import SeriesQuery, search_body, series_query
from toshokan.models import Chapter, FilterKey, SearchResponse
from toshokan.models.content import Entry

#: What drops one source out of a listing over several: it is locked, down or throttled.
SKIPPED = (InvalidCredentials, RateLimited, UpstreamError)
T = TypeVar("T")


def library_dto(visit: Visit) -> LibraryDto:
    return LibraryDto(id=library_id(visit.slug), name=visit.config.name)


async def list_libraries(request: Request, reading: Reading) -> Response:
    return as_json([library_dto(visit) for visit in await content.opened_visits(reading)])


async def one_library(request: Request, reading: Reading) -> Response:
    slug = source_of_library(request.path_params["id"])
    for visit in await content.opened_visits(reading):
        if visit.slug == slug:
            return as_json(library_dto(visit))
    raise NotFound("No library has this id.")


async def list_series(request: Request, reading: Reading) -> Response:
    """``GET /api/v1/series``: the query parameters Mihon's extension sends."""
    return await _series(reading, series_query(request.query_params))


async def new_series(request: Request, reading: Reading) -> Response:
    """``GET /api/v1/series/new``: the series the reader follows, the latest followed first;
    for a reader who follows none, the sources' listing, newest additions first."""
    query = series_query(request.query_params)
    if found := await following.followed(reading, query):
        shown = following.newly_followed(found)
        return as_json(await _followed_page(reading, shown, query))
    return await _series(reading, replace(query, sort="createdDate", ascending=False))


async def updated_series(request: Request, reading: Reading) -> Response:
    """``GET /api/v1/series/updated``: the followed series with chapters found new since,
    the latest found first; for a reader who follows none, the sources' listing, latest
    updates first."""
    query = series_query(request.query_params)
    if found := await following.followed(reading, query):
        return as_json(await _followed_page(reading, following.updated(found), query))
    return await _series(reading, replace(query, sort="lastModifiedDate", ascending=False))


async def _followed_page(
    reading: Reading, found: list[following.Followed], query: SeriesQuery
) -> PageWrapper[SeriesDto]:
    return await following.series_page(reading, found, query.page, query.size, query.read_statuses)


async def search_series(request: Request, reading: Reading) -> Response:
    """``POST /api/v1/series/list``: the search conditions Aidoku sends."""
    return await _series(reading, series_search(request.query_params, await read_json(request)))


async def _series(reading: Reading, query: SeriesQuery) -> Response:
    visits = [
        visit
        for visit in await content.opened_visits(reading)
        if not query.libraries or library_id(visit.slug) in query.libraries
    ]
    return as_json(await _listing(reading, visits, query))


async def _listing(
    reading: Reading, visits: list[Visit], query: SeriesQuery
) -> PageWrapper[SeriesDto]:
    asked = [(visit, body) for visit in visits if (body := search_body(query, visit.config))]
    answers = await asyncio.gather(
        *(content.search(reading, visit, body) for visit, body in asked),
        return_exceptions=len(asked) > 1,
    )
    found: list[tuple[Visit, list[Entry]]] = []
    totals: list[Awaitable[int | None]] = []
    more = False
    for (visit, body), answer in zip(asked, answers, strict=True):
        if isinstance(answer, SKIPPED):
            continue
        if isinstance(answer, BaseException):
            raise answer
        assert isinstance(answer, SearchResponse)
        found.append((visit, answer.results))
        totals.append(source_total(reading, visit, body, answer))
        more = more or answer.more
    shown, counted = await asyncio.gather(
        asyncio.gather(
            *(
                counted_series(reading, visit, entries, query.read_statuses)
                for visit, entries in found
            )
        ),
        asyncio.gather(*totals),
    )
    series = [one for part in shown for one in part]
    if query.read_statuses:  # the filter sees the pages asked for, no further: no count
        counted = [None]
    return joined_page(series, query.page, query.size, not more, counted)


async def source_total(
    reading: Reading, visit: Visit, body: dict[str, Any], answer: SearchResponse
) -> int | None:
    """How many series the source's search finds in all: known on its last page, counted by
    asking for pages where that reads the source's own index, else unknown (None)."""
    page, size = int(body["page"]), int(body["limit"])
    if not answer.more and (answer.results or page == 1):
        return (page - 1) * size + len(answer.results)
    if not content.holds_files(reading, visit):
        return None

    async def ask(number: int) -> tuple[int, bool]:
        asked = await content.search(reading, visit, {**body, "page": number})
        return len(asked.results), asked.more

    if answer.results:
        return await count_results(ask, size, after=page)
    return await count_results(ask, size, before=page)


def joined_page(
    items: list[T], number: int, size: int, last: bool, totals: Sequence[int | None]
) -> PageWrapper[T]:
    """A page of a listing joined from sources' pages: their counts summed when every one is
    known (as many pages as the longest source has), else what the pages so far imply."""
    known = [total for total in totals if total is not None]
    if len(known) < len(totals):
        return page_of(items, number, size, last=last)
    pages = max((-(-total // size) for total in known), default=0)
    return page_of(items, number, size, last=last, total=sum(known), pages=pages)


async def counted_series(
    reading: Reading, visit: Visit, entries: list[Entry], statuses: frozenset[str]
) -> list[SeriesDto]:
    """A source's page of results as series, their books counted where the chapter lists are
    cheap (the source's files are here) or needed (a read-status filter), and filtered by it.

    The filter looks at the page the source answered, no further: a page may
    show fewer series than it holds, and a series whose chapters cannot be
    listed in time is left out of it.
    """
    if not statuses and not content.holds_files(reading, visit):
        return [series_of_entry(visit.slug, entry, visit.config) for entry in entries]
    found = await content.progress_of(reading, visit, [entry.slug for entry in entries])
    return [
        series_of_entry(visit.slug, entry, visit.config, *_chapters_and_places(progress))
        for entry, progress in zip(entries, found, strict=True)
        if not statuses
        or (progress is not None and read_status(progress.chapters, progress.places) in statuses)
    ]


def _chapters_and_places(
    progress: SeriesProgress | None,
) -> tuple[list[Chapter], dict[str, Position]]:
    return ([], {}) if progress is None else (progress.chapters, progress.places)


async def one_series(request: Request, reading: Reading) -> Response:
    source, manga_slug = series_of(request.path_params["id"])
    visit = await content.visit_of(reading, source)
    work, chapters, places = await asyncio.gather(
        content.manga(reading, visit, manga_slug),
        content.chapters(reading, visit, manga_slug),
        content.positions(reading, source, manga_slug),
    )
    return as_json(series_of_manga(source, work, visit.config, chapters, places))


async def series_thumbnail(request: Request, reading: Reading) -> Response:
    source, manga_slug = series_of(request.path_params["id"])
    visit = await content.visit_of(reading, source)
    work = await content.manga(reading, visit, manga_slug)
    if not work.covers:
        raise NotFound("This series has no cover.")
    return picture(await content.thumbnail(reading, visit, work.covers[0]))


async def genres(request: Request, reading: Reading) -> Response:
    """The tags the reader's sources declare: the extension's genre filter offers them."""
    names = {
        tag.name
        for visit in await content.opened_visits(reading)
        for tag in visit.config.search.tags
    }
    return as_json(sorted(names, key=str.casefold))


async def languages(request: Request, reading: Reading) -> Response:
    """The languages the reader's sources are in."""
    codes = {
        code for visit in await content.opened_visits(reading) for code in visit.config.languages
    }
    return as_json(sorted(codes))


async def publishers(request: Request, reading: Reading) -> Response:
    """The publishers the reader's sources know (a library's index), for the publisher filter."""
    return as_json(sorted(await _known(reading, FilterKey.PUBLISHER), key=str.casefold))


async def authors(request: Request, reading: Reading) -> Response:
    """The writers the reader's sources know, as Komga's authors with the ``writer`` role: the
    sources' author filter matches writers."""
    names = sorted(await _known(reading, FilterKey.AUTHOR), key=str.casefold)
    return as_json([AuthorDto(name=name, role="writer") for name in names])


async def _known(reading: Reading, key: FilterKey) -> set[str]:
    visits = await content.opened_visits(reading)
    found = await asyncio.gather(*(content.known_values(reading, visit, key) for visit in visits))
    return {value for values in found for value in values}


async def empty_list(request: Request, reading: Reading) -> Response:
    """Tags, age ratings, release dates, sharing labels: sources declare none of them up
    front, so there is nothing to offer."""
    return as_json([])


async def me(request: Request, reading: Reading) -> Response:
    """Who signed in: Aidoku accepts a sign-in when ``email`` is the name it sent. On a host
    without readers anyone is the one implicit reader, by whatever name they typed."""
    name = reading.reader or reading.signed_as
    return as_json(UserDto(id=name, email=name, roles=["USER", "PAGE_STREAMING"]))
