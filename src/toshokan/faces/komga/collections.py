"""Collections: each source's presets (its curated searches), as Komga's collections.

A collection names its series (``seriesIds``), which apps that read the
collection object show (Aidoku); ``/collections/{id}/series`` pages through
them. A library whose files are here lists a preset's series whole (at most
:data:`MAX_SERIES`, reads of its own index); an upstream source names those of
the preset's first page, the same search the collection's first page asks,
since the whole of an upstream's preset ("most followed") has no end worth
reading. A source that is down names none rather than failing the list.

The series a reader follows are one more collection, the first listed,
*Following* (:mod:`toshokan.faces.komga.following`), when they follow any.
"""

import asyncio
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import Visit
from toshokan.errors import HostError, NotFound
from toshokan.faces.komga import content, following
from toshokan.faces.komga.answers import as_json
from toshokan.faces.komga.content import Reading
from toshokan.faces.komga.dto import CollectionDto, page_of
from toshokan.faces.komga.ids import collection_id, collection_of, series_id
from toshokan.faces.komga.listing import DEFAULT_SIZE, page_params, series_query
from toshokan.faces.komga.series import counted_series, joined_page, source_total
from toshokan.models.search import MAX_LIMIT

#: The most series a collection of a library names.
MAX_SERIES = 1000


def _changed(visit: Visit) -> datetime:
    return visit.config.updatedAt or datetime(1970, 1, 1, tzinfo=UTC)


def _preset_search(visit: Visit, index: int) -> dict[str, Any]:
    if index >= len(visit.config.presets):
        raise NotFound("No collection has this id.")
    body: dict[str, Any] = visit.config.presets[index].request.model_dump(
        mode="json", exclude_none=True
    )
    return body


async def _series_ids(reading: Reading, visit: Visit, index: int) -> list[str]:
    """The series the preset finds: all of a library's, the first page of an upstream's."""
    body = _preset_search(visit, index)
    whole = content.holds_files(reading, visit)
    size = MAX_LIMIT if whole else DEFAULT_SIZE
    found: list[str] = []
    page = 1
    try:
        while len(found) < MAX_SERIES:
            answer = await content.search(reading, visit, {**body, "page": page, "limit": size})
            found += [series_id(visit.slug, entry.slug) for entry in answer.results]
            if not (whole and answer.more):
                break
            page += 1
    except HostError as refused:
        if refused.status == 500:
            raise
        return []
    return list(dict.fromkeys(found))[:MAX_SERIES]


async def _collection(reading: Reading, visit: Visit, index: int) -> CollectionDto:
    return CollectionDto(
        id=collection_id(visit.slug, index),
        name=f"{visit.config.name}: {visit.config.presets[index].name}",
        seriesIds=await _series_ids(reading, visit, index),
        createdDate=_changed(visit),
        lastModifiedDate=_changed(visit),
    )


async def list_collections(request: Request, reading: Reading) -> Response:
    """The reader's *Following*, then the sources' presets, as collections; the extension's
    collection filter lists them."""
    page, size = page_params(request.query_params)
    followed = await following.followed(reading)
    every: list[tuple[Visit, int] | None] = [None] if followed else []
    every += [
        (visit, index)
        for visit in await content.opened_visits(reading)
        for index in range(len(visit.config.presets))
    ]

    async def one(chosen: tuple[Visit, int] | None) -> CollectionDto:
        if chosen is None:
            return following.collection(followed)
        return await _collection(reading, *chosen)

    shown = await asyncio.gather(
        *(one(chosen) for chosen in every[page * size : (page + 1) * size])
    )
    return as_json(
        page_of(list(shown), page, size, last=(page + 1) * size >= len(every), total=len(every))
    )


async def one_collection(request: Request, reading: Reading) -> Response:
    if request.path_params["id"] == following.FOLLOWING:
        return as_json(following.collection(await following.followed(reading)))
    source, index = collection_of(request.path_params["id"])
    visit = await content.visit_of(reading, source)
    _preset_search(visit, index)
    return as_json(await _collection(reading, visit, index))


async def collection_series(request: Request, reading: Reading) -> Response:
    """A preset's search, page by page; the followed series, by title."""
    if request.path_params["id"] == following.FOLLOWING:
        query = series_query(request.query_params)
        found = await following.followed(reading, query)
        return as_json(
            await following.series_page(reading, found, query.page, query.size, query.read_statuses)
        )
    source, index = collection_of(request.path_params["id"])
    visit = await content.visit_of(reading, source)
    body = _preset_search(visit, index)
    page, size = page_params(request.query_params)
    body.update(page=page + 1, limit=size)
    answer = await content.search(reading, visit, body)
    statuses = series_query(request.query_params).read_statuses
    series, total = await asyncio.gather(
        counted_series(reading, visit, answer.results, statuses),
        source_total(reading, visit, body, answer),
    )
    return as_json(joined_page(series, page, size, not answer.more, [None if statuses else total]))
