"""The Atom catalogue's lists of titles: all titles (a facet per sort), a preset, a search.

Each is one page of a search the core answers, with ``first``/``previous``/
``next`` links and ``opensearch:totalResults`` where the count is known
(:func:`~toshokan.faces.opds.searches.titles_page`): no list ever loads a
whole source.

A list is a navigation feed: a series is no book to acquire but a feed of
chapters, each entry a ``subsection`` link to it. Readers built on Readium
(Thorium) read an entry without an acquisition link as a publication when it
names authors, and list it as a book that cannot be opened; so list entries
name none (the series feed does), and keep their covers, which navigation
entries may carry.
"""

from typing import Any
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import Response

from toshokan.faces.opds import atom
from toshokan.faces.opds.atom import NAVIGATION, Feed, Link
from toshokan.faces.opds.catalogue import feed_response, search_links
from toshokan.faces.opds.context import PAGE_SIZE, CatalogueVisit, query_of
from toshokan.faces.opds.entries import series_entry
from toshokan.faces.opds.listed import listed_titles
from toshokan.faces.opds.searches import (
    all_titles_search,
    preset_search,
    query_search,
    sort_label,
    titles_page,
)


async def all_titles(request: Request, visit: CatalogueVisit) -> Response:
    sort, body = all_titles_search(request, visit)
    facets = [
        Link(
            atom.REL_FACET,
            visit.url("all", query={"sort": str(option)}),
            NAVIGATION,
            sort_label(option),
            extra={
                f"{{{atom.OPDS}}}facetGroup": "Sort",
                **({f"{{{atom.OPDS}}}activeFacet": "true"} if str(option) == sort else {}),
            },
        )
        for option in visit.config.search.sort
    ]
    return await search_feed(visit, body, "All titles", ("all",), [("sort", sort)], facets)


async def preset(request: Request, visit: CatalogueVisit) -> Response:
    number, name, body = preset_search(request, visit)
    return await search_feed(visit, body, name, ("presets", number), [])


async def source_search(request: Request, visit: CatalogueVisit) -> Response:
    query = query_of(request)
    title = f"Search: {query}" if query else "All titles"
    body = query_search(request, visit, query)
    return await search_feed(visit, body, title, ("search",), [("q", query)])


async def search_feed(
    visit: CatalogueVisit,
    body: dict[str, Any],
    title: str,
    where: tuple[str, ...],
    query: list[tuple[str, str]],
    facets: list[Link] | None = None,
) -> Response:
    found = await titles_page(visit, body)
    page = int(body["page"])
    shown = [*query, ("page", str(page))]
    feed = Feed(
        id=f"urn:toshokan:opds:{visit.slug}:{quote('/'.join([visit.slug, *where]))}:{urlencode(shown)}",
        title=f"{visit.config.name}: {title}",
        links=[
            Link("self", visit.url(*where, query=shown), NAVIGATION),
            Link("start", visit.root, NAVIGATION),
            Link("up", visit.url(), NAVIGATION),
            *search_links(visit),
            *atom.pages(visit.url(*where), page, found.more, NAVIGATION, query),
            *(facets or []),
        ],
        entries=[
            series_entry(visit, listed) for listed in await listed_titles(visit, found.results)
        ],
        per_page=PAGE_SIZE,
        start_index=(page - 1) * PAGE_SIZE + 1,
        total=found.total,
    )
    return feed_response(feed, NAVIGATION, found.private or visit.private)
