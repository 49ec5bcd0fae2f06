"""The searches behind the catalogue's lists: all titles, a preset, a query; and their sorts.

Every list of either catalogue is one page of a search the core answers, so
both build their search bodies here (the sort a browsing reader expects, the
sort a query wants, a preset's own request) and read the page and the list's
count here.
"""

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from toshokan.core.counting import count_results
from toshokan.errors import NotFound
from toshokan.faces.opds.context import PAGE_SIZE, CatalogueVisit, page_of
from toshokan.models import Entry, SourceConfiguration

SORT_LABELS = {
    "relevance": "Relevance",
    "latest": "Latest",
    "title": "Title",
    "popularity": "Popularity",
    "rating": "Rating",
    "chapters": "Chapters",
    "year": "Year",
    "views": "Views",
    "follows": "Follows",
    "createdAt": "Date added",
    "updatedAt": "Last updated",
}


def sort_label(option: object) -> str:
    return SORT_LABELS.get(str(option), str(option))


def search_sort(config: SourceConfiguration) -> str:
    sorts = [str(s) for s in config.search.sort]
    return "relevance" if "relevance" in sorts else sorts[0]


def browse_sort(config: SourceConfiguration) -> str:
    sorts = [str(s) for s in config.search.sort]
    for preferred in ("latest", "updatedAt", "title"):
        if preferred in sorts:
            return preferred
    return sorts[0]


def ordered(sort: str) -> dict[str, str]:
    """A sort in the direction its facet's name promises: titles A to Z, everything else
    newest or most first (the spec's default direction, ``desc``, would list titles Z to A)."""
    return {"sort": sort, "direction": "asc" if sort == "title" else "desc"}


def all_titles_search(request: Request, visit: CatalogueVisit) -> tuple[str, dict[str, Any]]:
    """The sort asked for (or the browsing one), and the search for this page of every title."""
    sort = request.query_params.get("sort") or browse_sort(visit.config)
    return sort, {"query": "", "page": page_of(request), "limit": PAGE_SIZE, **ordered(sort)}


def query_search(request: Request, visit: CatalogueVisit, query: str) -> dict[str, Any]:
    """A reader's query, by relevance; an empty one browses."""
    sort = search_sort(visit.config) if query else browse_sort(visit.config)
    return {"query": query, "page": page_of(request), "limit": PAGE_SIZE, **ordered(sort)}


def preset_search(request: Request, visit: CatalogueVisit) -> tuple[str, str, dict[str, Any]]:
    """The preset a feed's path numbers: its number, its name and the search body for this page."""
    number = request.path_params["number"]
    presets = visit.config.presets or []
    if not (number.isascii() and number.isdigit()) or int(number) >= len(presets):
        raise NotFound(f"{visit.config.name} has {len(presets)} preset(s).")
    chosen = presets[int(number)]
    body = chosen.request.model_dump(mode="json", exclude_none=True)
    body.update(page=page_of(request), limit=PAGE_SIZE)
    return number, chosen.name, body


@dataclass(frozen=True)
class TitlesPage:
    """One page of a list of titles, and the list's count where it is known."""

    results: list[Entry]
    more: bool
    #: How many titles the whole list holds; None when this page cannot tell.
    total: int | None
    #: The answer was for this caller only.
    private: bool


async def titles_page(visit: CatalogueVisit, body: dict[str, Any]) -> TitlesPage:
    """The page of the list ``body`` asks for, counted when the count is known.

    A search tells only whether another page follows, so the count is known
    on the last page. A page past the end (a reader asking for page 99 of a
    list of three) is empty: where the list ends is then found by halving the
    pages before it (:func:`~toshokan.core.counting.count_results`), which costs
    a few reads of the index of a source that holds its files here, and would
    cost as many upstream requests of a remote one, so a remote source's list
    states no count there rather than a guess.
    """
    answer = await visit.source_visit.search(body)
    found, page, limit = answer.value, int(body["page"]), int(body["limit"])
    total: int | None = None
    if found.results or page == 1:
        total = None if found.more else (page - 1) * limit + len(found.results)
    elif visit.holds_files:

        async def ask(number: int) -> tuple[int, bool]:
            asked = (await visit.source_visit.search({**body, "page": number})).value
            return len(asked.results), asked.more

        total = await count_results(ask, limit, before=page)
    return TitlesPage(found.results, found.more, total, answer.private)
