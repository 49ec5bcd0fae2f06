"""Libraries, series and the lists the extension's filters load: the sources and their works.

A library is a serving source the reader can open; a listing over several
asks each the same page at once and joins them (a page holds up to ``size``
series from each, and is the last when none has more), since sources cannot
be merged into one order without reading them whole. A source that fails or
stays locked drops out of a listing over several rather than failing it.
"""

import asyncio
from dataclasses import replace
from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core.bodies import read_json
from toshokan.core.progress import Position
from toshokan.errors import InvalidCredentials, NotFound, RateLimited, UpstreamError
from toshokan.faces.komga import content
from toshokan.faces.komga.answers import as_json, picture
from toshokan.faces.komga.conditions import series_search
from toshokan.faces.komga.content import Library, Reading, SeriesProgress
from toshokan.faces.komga.dto import (
    AuthorDto,
    CollectionDto,
    LibraryDto,
    PageWrapper,
    SeriesDto,
    UserDto,
    page_of,
)
from toshokan.faces.komga.ids import (
    collection_id,
    collection_of,
    library_id,
    series_of,
    source_of_library,
)
from toshokan.faces.komga.listing import SeriesQuery, page_params, search_body, series_query
from toshokan.faces.komga.shapes import read_status, series_of_entry, series_of_manga
from toshokan.models import Chapter, FilterKey, SearchResponse
from toshokan.models.content import Entry

#: What drops one source out of a listing over several: it is locked, down or throttled.
SKIPPED = (InvalidCredentials, RateLimited, UpstreamError)


def library_dto(shelf: Library) -> LibraryDto:
    return LibraryDto(id=library_id(shelf.slug), name=shelf.config.name)


async def list_libraries(request: Request, reading: Reading) -> Response:
    return as_json([library_dto(shelf) for shelf in await content.libraries(reading)])


async def one_library(request: Request, reading: Reading) -> Response:
    slug = source_of_library(request.path_params["id"])
    for shelf in await content.libraries(reading):
        if shelf.slug == slug:
            return as_json(library_dto(shelf))
    raise NotFound("No library has this id.")


async def list_series(request: Request, reading: Reading) -> Response:
    """``GET /api/v1/series``: the query parameters Mihon's extension sends."""
    return await _series(reading, series_query(request.query_params))


async def new_series(request: Request, reading: Reading) -> Response:
    """``GET /api/v1/series/new``: the listing, newest additions first."""
    query = series_query(request.query_params)
    return await _series(reading, replace(query, sort="createdDate", ascending=False))


async def updated_series(request: Request, reading: Reading) -> Response:
    """``GET /api/v1/series/updated``: the listing, latest updates first."""
    query = series_query(request.query_params)
    return await _series(reading, replace(query, sort="lastModifiedDate", ascending=False))


async def search_series(request: Request, reading: Reading) -> Response:
    """``POST /api/v1/series/list``: the search conditions Aidoku sends."""
    return await _series(reading, series_search(request.query_params, await read_json(request)))


async def _series(reading: Reading, query: SeriesQuery) -> Response:
    shelves = [
        shelf
        for shelf in await content.libraries(reading)
        if not query.libraries or library_id(shelf.slug) in query.libraries
    ]
    return as_json(await _listing(reading, shelves, query))


async def _listing(
    reading: Reading, shelves: list[Library], query: SeriesQuery
) -> PageWrapper[SeriesDto]:
    asked = [(shelf, body) for shelf in shelves if (body := search_body(query, shelf.config))]
    answers = await asyncio.gather(
        *(content.search(reading, shelf, body) for shelf, body in asked),
        return_exceptions=len(asked) > 1,
    )
    found: list[tuple[Library, list[Entry]]] = []
    more = False
    for (shelf, _), answer in zip(asked, answers, strict=True):
        if isinstance(answer, SKIPPED):
            continue
        if isinstance(answer, BaseException):
            raise answer
        assert isinstance(answer, SearchResponse)
        found.append((shelf, answer.results))
        more = more or answer.more
    shown = await asyncio.gather(
        *(_counted(reading, shelf, entries, query.read_statuses) for shelf, entries in found)
    )
    series = [one for part in shown for one in part]
    return page_of(series, query.page, query.size, last=not more)


async def _counted(
    reading: Reading, shelf: Library, entries: list[Entry], statuses: frozenset[str]
) -> list[SeriesDto]:
    """A source's page of results as series, their books counted where the chapter lists are
    cheap (the source's files are here) or needed (a read-status filter), and filtered by it.

    The filter looks at the page the source answered, no further: a page may
    show fewer series than it holds, and a series whose chapters cannot be
    listed in time is left out of it.
    """
    if not statuses and not content.holds_files(reading, shelf):
        return [series_of_entry(shelf.slug, entry, shelf.config) for entry in entries]
    found = await content.progress_of(reading, shelf, [entry.slug for entry in entries])
    return [
        series_of_entry(shelf.slug, entry, shelf.config, *_chapters_and_places(progress))
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
    shelf = await content.library(reading, source)
    work, chapters, places = await asyncio.gather(
        content.manga(reading, shelf, manga_slug),
        content.chapters(reading, shelf, manga_slug),
        content.positions(reading, source, manga_slug),
    )
    return as_json(series_of_manga(source, work, shelf.config, chapters, places))


async def series_thumbnail(request: Request, reading: Reading) -> Response:
    source, manga_slug = series_of(request.path_params["id"])
    shelf = await content.library(reading, source)
    work = await content.manga(reading, shelf, manga_slug)
    if not work.covers:
        raise NotFound("This series has no cover.")
    return picture(await content.thumbnail(reading, shelf, work.covers[0]))


async def genres(request: Request, reading: Reading) -> Response:
    """The tags the reader's sources declare: the extension's genre filter offers them."""
    names = {
        tag.name for shelf in await content.libraries(reading) for tag in shelf.config.search.tags
    }
    return as_json(sorted(names, key=str.casefold))


async def languages(request: Request, reading: Reading) -> Response:
    """The languages the reader's sources are in."""
    codes = {code for shelf in await content.libraries(reading) for code in shelf.config.languages}
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
    shelves = await content.libraries(reading)
    found = await asyncio.gather(*(content.known_values(reading, shelf, key) for shelf in shelves))
    return {value for values in found for value in values}


async def empty_list(request: Request, reading: Reading) -> Response:
    """Tags, age ratings, release dates, sharing labels: sources declare none of them up
    front, so there is nothing to offer."""
    return as_json([])


def _collections(shelves: list[Library]) -> list[CollectionDto]:
    return [
        CollectionDto(
            id=collection_id(shelf.slug, index),
            name=f"{shelf.config.name}: {preset.name}",
            seriesIds=[],
            createdDate=_changed(shelf),
            lastModifiedDate=_changed(shelf),
        )
        for shelf in shelves
        for index, preset in enumerate(shelf.config.presets)
    ]


def _changed(shelf: Library) -> datetime:
    return shelf.config.updatedAt or datetime(1970, 1, 1, tzinfo=UTC)


async def list_collections(request: Request, reading: Reading) -> Response:
    """The sources' presets, as collections; the extension's collection filter lists them."""
    page, size = page_params(request.query_params)
    every = _collections(await content.libraries(reading))
    shown = every[page * size : (page + 1) * size]
    return as_json(
        page_of(shown, page, size, last=(page + 1) * size >= len(every), total=len(every))
    )


async def collection_series(request: Request, reading: Reading) -> Response:
    """A preset's search, page by page."""
    source, index = collection_of(request.path_params["id"])
    shelf = await content.library(reading, source)
    if index >= len(shelf.config.presets):
        raise NotFound("No collection has this id.")
    page, size = page_params(request.query_params)
    body = shelf.config.presets[index].request.model_dump(mode="json", exclude_none=True)
    body.update(page=page + 1, limit=size)
    answer = await content.search(reading, shelf, body)
    statuses = series_query(request.query_params).read_statuses
    series = await _counted(reading, shelf, answer.results, statuses)
    return as_json(page_of(series, page, size, last=not answer.more))


async def empty_page(request: Request, reading: Reading) -> Response:
    """Read lists: the host keeps none."""
    page, size = page_params(request.query_params)
    return as_json(page_of([], page, size, last=True, total=0))


async def no_read_list(request: Request, reading: Reading) -> Response:
    raise NotFound("The host keeps no read lists.")


async def me(request: Request, reading: Reading) -> Response:
    """Who signed in: Aidoku accepts a sign-in when ``email`` is the name it sent. On a host
    without readers anyone is the one implicit reader, by whatever name they typed."""
    name = reading.reader or reading.signed_as
    return as_json(UserDto(id=name, email=name, roles=["USER", "PAGE_STREAMING"]))
