"""The OPDS 2.0 catalogue's navigation and lists: the root, a source, and pages of titles.

The walk mirrors the Atom catalogue: the root navigates to each source and
searches them all; a source to its titles and presets; lists are pages of a search with ``next``,
``previous`` and ``first`` links and the source's sorts as facets. Searches are
templated links (``{?query}``), as OPDS 2.0 has it.

A list's titles are ``navigation`` links to their series feeds, not
``publications``: a publication promises an acquisition link, and a series is
a feed of chapters, not a file. The schema wants a feed to hold at least one
publication, navigation link or group, so an empty page (no results, or past
the end of a list) holds a link back.
"""

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import Urls, with_query
from toshokan.core.http import Entry
from toshokan.faces.opds.context import PAGE_SIZE, CatalogueVisit, page_of, query_of, signed_reader
from toshokan.faces.opds.everywhere import search_everywhere
from toshokan.faces.opds.searches import (
    all_titles_search,
    preset_search,
    query_search,
    sort_label,
    titles_page,
)
from toshokan.faces.opds.signin import catalogue
from toshokan.faces.opds.v2_documents import (
    OPDS_JSON,
    json_response,
    link,
    pagination,
    search_link,
    way_back,
)
from toshokan.faces.opds.v2_follows import follows_navigation


async def root(request: Request, entry: Entry) -> Response:
    core, urls = entry.core, entry.urls
    base = catalogue(urls, "v2")
    navigation = []
    for hosted in core.sources.serving():
        config = await core.configuration(hosted)
        navigation.append(
            {"href": catalogue(urls, "v2", hosted.slug), "title": config.name, "type": OPDS_JSON}
        )
    document = {
        "metadata": {"title": core.settings.host.name},
        "links": [link(base, rel="self"), link(base, rel="start"), everywhere_link(urls)],
        "navigation": [*follows_navigation(urls), *navigation],
    }
    return json_response(document, OPDS_JSON, private=False)


def everywhere_link(urls: Urls) -> dict[str, Any]:
    """The search over every source, templated as OPDS 2.0 has it (``{?query}``): readers offer
    search at the root (KOReader, comiccatcher), as the Atom catalogue's root does."""
    template = catalogue(urls, "v2", "_search", template="{?query}")
    return link(template, rel="search", templated=True, title="Search every source")


async def root_search(request: Request, entry: Entry) -> Response:
    """``/_/opds/v2/_search?query=``: a page of every source's search, each title a navigation
    link to its series (up to ``PER_SOURCE`` of each source), grouped by source."""
    reader = signed_reader(entry)
    urls = entry.urls
    query, page = query_of(request, "query"), page_of(request)
    answered = await search_everywhere(entry, reader, query, page)
    url = catalogue(urls, "v2", "_search")
    kept = [("query", query)]
    groups = [
        {
            "metadata": {"title": found.visit.config.name},
            "navigation": [
                link(found.visit.v2_url("series", t.slug), title=t.title, rel="subsection")
                for t in found.titles
            ],
        }
        for found in answered
        if found.titles
    ]
    document: dict[str, Any] = {
        "metadata": {"title": f"Search: {query}" if query else "Everything", "currentPage": page},
        "links": [
            link(with_query(url, [*kept, ("page", str(page))]), rel="self"),
            link(catalogue(urls, "v2"), rel="start"),
            link(catalogue(urls, "v2"), rel="up"),
            everywhere_link(urls),
            *pagination(url, page, any(found.more for found in answered), kept),
        ],
    }
    if groups:
        document["groups"] = groups
    else:  # a feed holds something: the way back to the root
        document["navigation"] = [
            link(catalogue(urls, "v2"), title="Nothing found: back to every source", rel="up")
        ]
    return json_response(document, OPDS_JSON, private=True)


async def source_root(request: Request, visit: CatalogueVisit) -> Response:
    navigation = [{"href": visit.v2_url("all"), "title": "All titles", "type": OPDS_JSON}]
    navigation += [
        {"href": visit.v2_url("presets", str(n)), "title": preset.name, "type": OPDS_JSON}
        for n, preset in enumerate(visit.config.presets or [])
    ]
    document = {
        "metadata": {"title": visit.config.name},
        "links": [
            link(visit.v2_url(), rel="self"),
            link(visit.v2_root, rel="start"),
            link(visit.v2_root, rel="up"),
            search_link(visit),
        ],
        "navigation": navigation,
    }
    return json_response(document, OPDS_JSON, visit.private)


async def all_titles(request: Request, visit: CatalogueVisit) -> Response:
    sort, body = all_titles_search(request, visit)
    facets = [
        {
            "metadata": {"title": "Sort"},
            "links": [
                link(
                    visit.v2_url("all", query={"sort": str(option)}),
                    title=sort_label(option),
                    **({"rel": "self"} if str(option) == sort else {}),
                )
                for option in visit.config.search.sort
            ],
        }
    ]
    return await titles_feed(
        visit, body, "All titles", visit.v2_url("all"), [("sort", sort)], facets
    )


async def preset(request: Request, visit: CatalogueVisit) -> Response:
    number, name, body = preset_search(request, visit)
    return await titles_feed(visit, body, name, visit.v2_url("presets", number), [])


async def search(request: Request, visit: CatalogueVisit) -> Response:
    query = query_of(request, "query")
    title = f"Search: {query}" if query else "All titles"
    body = query_search(request, visit, query)
    return await titles_feed(visit, body, title, visit.v2_url("search"), [("query", query)])


async def titles_feed(
    visit: CatalogueVisit,
    body: dict[str, Any],
    title: str,
    url: str,
    query: list[tuple[str, str]],
    facets: list[dict[str, Any]] | None = None,
) -> Response:
    found = await titles_page(visit, body)
    page = int(body["page"])
    metadata: dict[str, Any] = {
        "title": f"{visit.config.name}: {title}",
        "itemsPerPage": PAGE_SIZE,
        "currentPage": page,
    }
    if found.total is not None:
        metadata["numberOfItems"] = found.total
    document: dict[str, Any] = {
        "metadata": metadata,
        "links": [
            link(with_query(url, [*query, ("page", str(page))]), rel="self"),
            link(visit.v2_root, rel="start"),
            link(visit.v2_url(), rel="up"),
            search_link(visit),
            *pagination(url, page, found.more, query),
        ],
        "navigation": [
            link(visit.v2_url("series", entry.slug), title=entry.title, rel="subsection")
            for entry in found.results
        ]
        or [way_back(visit, url, page, query)],
    }
    if facets:
        document["facets"] = facets
    return json_response(document, OPDS_JSON, found.private or visit.private)
