"""Komga's series query (``search``, ``sort``, filters, pages from 0) as the spec's search body.

Komga's clients send one query for the whole server; the host asks each
source in its own vocabulary. Filter values arrive comma-joined in one
parameter (``genre=a,b``), possibly repeated; ``search=`` arrives even when
empty. A filter a source cannot express makes that source contribute nothing
(a series it lists could not match), rather than its unfiltered list.
Every value is bounded before any source sees it; the core checks the rest.
"""

from dataclasses import dataclass
from typing import Any

from starlette.datastructures import QueryParams

from toshokan.errors import InvalidRequest
from toshokan.models import SourceConfiguration
from toshokan.models.search import (
    MAX_FILTER_CHARS,
    MAX_FILTER_ITEMS,
    MAX_LIMIT,
    MAX_PAGE,
    MAX_QUERY_CHARS,
    FilterKey,
    SortOption,
)

#: Komga's default page size.
DEFAULT_SIZE = 20
#: Komga's statuses as the spec's publication values.
PUBLICATION = {
    "ONGOING": "Ongoing",
    "ENDED": "Completed",
    "ABANDONED": "Cancelled",
    "HIATUS": "Hiatus",
}
#: Komga's read statuses of a series, from the reader's places in its books.
READ_STATUSES = frozenset({"UNREAD", "IN_PROGRESS", "READ"})
#: Komga's sort properties, and the spec's sorts that say the same, best first.
SORTS: dict[str, tuple[SortOption, ...]] = {
    "relevance": (SortOption.RELEVANCE,),
    "metadata.titleSort": (SortOption.TITLE,),
    "name": (SortOption.TITLE,),
    "createdDate": (SortOption.CREATED_AT, SortOption.LATEST),
    "lastModifiedDate": (SortOption.UPDATED_AT, SortOption.LATEST),
}


@dataclass(frozen=True)
class SeriesQuery:
    """What a series listing asks, checked and bounded."""

    search: str
    page: int
    size: int
    sort: str
    ascending: bool
    libraries: frozenset[str]
    tags: tuple[str, ...]
    statuses: tuple[str, ...]
    publishers: tuple[str, ...]
    authors: tuple[str, ...]
    #: Any of these (Mihon's *Unread* sends UNREAD and IN_PROGRESS); empty asks for every one.
    read_statuses: frozenset[str] = frozenset()


def _number(params: QueryParams, name: str, default: int, low: int, high: int) -> int:
    text = params.get(name)
    if text is None or text == "":
        return default
    if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
        raise InvalidRequest(f"{name} must be a whole number from {low} to {high}.")
    return int(text)


def _values(params: QueryParams, name: str, *, comma_joined: bool = True) -> tuple[str, ...]:
    """Every value of a parameter, repeated or comma-joined, bounded in count and length."""
    sent = params.getlist(name)
    values = [v.strip() for text in sent for v in (text.split(",") if comma_joined else [text])]
    values = [v for v in values if v]
    if len(values) > MAX_FILTER_ITEMS or any(len(v) > MAX_FILTER_CHARS for v in values):
        raise InvalidRequest(
            f"{name} takes at most {MAX_FILTER_ITEMS} values of {MAX_FILTER_CHARS} characters."
        )
    return tuple(values)


def page_params(params: QueryParams) -> tuple[int, int]:
    """Komga's ``page`` (from 0) and ``size``; ``unpaged=true`` is the largest page allowed."""
    page = _number(params, "page", 0, 0, MAX_PAGE - 1)
    if params.get("unpaged") == "true":
        return 0, MAX_LIMIT
    return page, _number(params, "size", DEFAULT_SIZE, 1, MAX_LIMIT)


def read_statuses(values: tuple[str, ...]) -> frozenset[str]:
    """Komga's ``ReadStatus`` names, checked: anything else is a 400, as Spring binds an enum."""
    if not READ_STATUSES.issuperset(values):
        raise InvalidRequest(f"read_status is one of {', '.join(sorted(READ_STATUSES))}.")
    return frozenset(values)


def series_query(params: QueryParams) -> SeriesQuery:
    search = params.get("search", "").strip()
    if len(search) > MAX_QUERY_CHARS:
        raise InvalidRequest(f"A search is at most {MAX_QUERY_CHARS} characters.")
    page, size = page_params(params)
    sort, _, direction = params.get("sort", "").partition(",")
    if len(sort) > MAX_FILTER_CHARS:
        raise InvalidRequest("sort names one property and a direction.")
    return SeriesQuery(
        search=search,
        page=page,
        size=size,
        sort=sort,
        ascending=direction.strip().lower() != "desc",
        libraries=frozenset(_values(params, "library_id")),
        tags=_values(params, "genre") + _values(params, "tag"),
        statuses=_values(params, "status"),
        publishers=_values(params, "publisher"),
        # ``author=name,role``: the comma here separates a name from its role.
        authors=tuple(
            v.rpartition(",")[0] or v for v in _values(params, "author", comma_joined=False)
        ),
        read_statuses=read_statuses(_values(params, "read_status")),
    )


def search_body(query: SeriesQuery, config: SourceConfiguration) -> dict[str, Any] | None:
    """The spec's search for one source; None when the source cannot express a filter."""
    declared = config.search
    wanted = SORTS.get(query.sort, ())
    sort = next((s for s in wanted if s in declared.sort), None)
    filters: dict[str, Any] = {}
    if query.tags:
        by_name = {tag.name.casefold(): tag.slug for tag in declared.tags}
        slugs = [by_name.get(name.casefold()) for name in query.tags]
        if FilterKey.INCLUDE_TAG in declared.filters and all(slugs):
            filters["includeTag"] = slugs
        elif FilterKey.GENRE in declared.filters:
            filters["genre"] = list(query.tags)
        else:
            return None
    for values, key, shown in (
        (query.statuses, FilterKey.STATUS, [PUBLICATION.get(s.upper(), s) for s in query.statuses]),
        (query.publishers, FilterKey.PUBLISHER, query.publishers[:1]),
        (query.authors, FilterKey.AUTHOR, query.authors[:1]),
    ):
        if not values:
            continue
        if key not in declared.filters:
            return None
        filters[key.value] = shown if key is FilterKey.STATUS else shown[0]
    # Relevance runs one way only: the best match first.
    ascending = query.ascending and sort is not None and sort is not SortOption.RELEVANCE
    return {
        "query": query.search,
        "page": query.page + 1,
        "limit": query.size,
        "sort": (sort or declared.sort[0]).value,
        "direction": "asc" if ascending else "desc",
        "filters": filters,
    }
