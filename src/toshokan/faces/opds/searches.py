"""The searches behind the catalogue's lists: all titles, a preset, a query; and their sorts.

Every list of either catalogue is one page of a search the core answers, so
both build their search bodies here: the sort a browsing reader expects, the
sort a query wants, a preset's own request.
"""

from typing import Any

from starlette.requests import Request

from toshokan.errors import NotFound
from toshokan.faces.opds.context import PAGE_SIZE, Ctx, page_of
from toshokan.models import SourceConfiguration

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


def all_titles_search(request: Request, ctx: Ctx) -> tuple[str, dict[str, Any]]:
    """The sort asked for (or the browsing one), and the search for this page of every title."""
    sort = request.query_params.get("sort") or browse_sort(ctx.config)
    return sort, {"query": "", "page": page_of(request), "limit": PAGE_SIZE, "sort": sort}


def query_search(request: Request, ctx: Ctx, query: str) -> dict[str, Any]:
    """A reader's query, by relevance; an empty one browses."""
    body: dict[str, Any] = {"query": query, "page": page_of(request), "limit": PAGE_SIZE}
    body["sort"] = search_sort(ctx.config) if query else browse_sort(ctx.config)
    return body


def preset_search(request: Request, ctx: Ctx) -> tuple[str, str, dict[str, Any]]:
    """The preset a feed's path numbers: its number, its name and the search body for this page."""
    number = request.path_params["number"]
    presets = ctx.config.presets or []
    if not (number.isascii() and number.isdigit()) or int(number) >= len(presets):
        raise NotFound(f"{ctx.config.name} has {len(presets)} preset(s).")
    chosen = presets[int(number)]
    body = chosen.request.model_dump(mode="json", exclude_none=True)
    body.update(page=page_of(request), limit=PAGE_SIZE)
    return number, chosen.name, body
