"""The Atom catalogue's navigation: the root, one search over every source, a source's menu.

Every source serving is an entry of the root; a source offers its titles and
its presets. Both have an OpenSearch description (readers fill in
``{searchTerms}``) and the template itself, which some readers use directly.
Every list of titles is a navigation feed (:mod:`toshokan.faces.opds.lists`),
so each link to one says so.
"""

import logging
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import Urls
from toshokan.core.http import Entry
from toshokan.core.progress import IMPLICIT_READER
from toshokan.faces.opds import atom
from toshokan.faces.opds.atom import NAVIGATION, AtomEntry, Feed, Link
from toshokan.faces.opds.context import (
    CatalogueVisit,
    cache_control,
    page_of,
    query_of,
    signed_reader,
)
from toshokan.faces.opds.entries import series_entry
from toshokan.faces.opds.everywhere import search_everywhere
from toshokan.faces.opds.follows import follows_entries
from toshokan.faces.opds.signin import catalogue

log = logging.getLogger("toshokan.opds")
#: What OpenSearch readers fill in with their query.
SEARCH_TEMPLATE = "?q={searchTerms}"


def feed_response(feed: Feed, kind: str, private: bool) -> Response:
    return Response(feed.xml(), media_type=kind, headers=cache_control(private))


def search_links(visit: CatalogueVisit) -> list[Link]:
    """The source's OpenSearch description, and the template some readers use directly."""
    return [
        Link("search", visit.url("opensearch.xml"), atom.OPENSEARCH_TYPE, "Search"),
        Link("search", visit.url("search", template=SEARCH_TEMPLATE), NAVIGATION, "Search"),
    ]


def everywhere_template(urls: Urls) -> str:
    """The template of the search over every source."""
    return catalogue(urls, "_search", template=SEARCH_TEMPLATE)


async def root(request: Request, entry: Entry) -> Response:
    reader = signed_reader(entry)
    core, urls = entry.core, entry.urls
    entries = follows_entries(urls)
    for hosted in core.sources.serving():
        config = await core.configuration(hosted)
        # A source that accepts the host's readers is open to the reader signed in here.
        opened = hosted.accepts_readers and reader != IMPLICIT_READER
        lock = " (sign-in required)" if config.auth.required and not opened else ""
        entries.append(
            AtomEntry(
                id=f"urn:toshokan:opds:{hosted.slug}",
                title=config.name,
                updated=atom.timestamp(),
                content=f"Browse and search {config.name}{lock}.",
                links=[
                    Link("subsection", catalogue(urls, hosted.slug), NAVIGATION),
                    Link(atom.REL_THUMBNAIL, config.icon, "image/png"),
                ],
            )
        )
    feed = Feed(
        id="urn:toshokan:opds",
        title=core.settings.host.name,
        subtitle="Every source of this host",
        author=core.settings.host.author,
        links=[
            Link("self", catalogue(urls), NAVIGATION),
            Link("start", catalogue(urls), NAVIGATION),
            Link(
                "search",
                catalogue(urls, "opensearch.xml"),
                atom.OPENSEARCH_TYPE,
                "Search every source",
            ),
            Link("search", everywhere_template(urls), NAVIGATION, "Search every source"),
        ],
        entries=entries,
    )
    return feed_response(feed, NAVIGATION, private=False)


async def root_opensearch(request: Request, entry: Entry) -> Response:
    body = atom.opensearch_description(
        entry.core.settings.host.name,
        "Search every source of this host.",
        everywhere_template(entry.urls),
    )
    return Response(body, media_type=atom.OPENSEARCH_TYPE)


async def root_search(request: Request, entry: Entry) -> Response:
    """One search over every source that lets this caller in; a source that fails is skipped."""
    reader = signed_reader(entry)
    urls = entry.urls
    query, page = query_of(request), page_of(request)
    answered = await search_everywhere(entry, reader, query, page)
    entries = [
        series_entry(found.visit, listed, f"From {found.visit.config.name}.")
        for found in answered
        for listed in found.titles
    ]
    more = any(found.more for found in answered)
    self_url = catalogue(urls, "_search")
    feed = Feed(
        id=f"urn:toshokan:opds:search:{quote(query)}:{page}",
        title=f"Search: {query}" if query else "Everything",
        links=[
            Link(
                "self",
                catalogue(urls, "_search", query={"q": query, "page": str(page)}),
                NAVIGATION,
            ),
            Link("start", catalogue(urls), NAVIGATION),
            Link("up", catalogue(urls), NAVIGATION),
            *atom.pages(self_url, page, more, NAVIGATION, [("q", query)]),
        ],
        # No itemsPerPage, startIndex or count: a page holds up to PER_SOURCE titles of each
        # source, so it is no window of one sequence those would describe.
        entries=entries,
    )
    return feed_response(feed, NAVIGATION, private=True)


async def source_root(request: Request, visit: CatalogueVisit) -> Response:
    now = atom.timestamp()
    entries = [
        AtomEntry(
            id=f"urn:toshokan:opds:{visit.slug}:all",
            title="All titles",
            updated=now,
            content=f"Everything in {visit.config.name}, one page at a time.",
            links=[Link("subsection", visit.url("all"), NAVIGATION)],
        )
    ]
    for number, preset in enumerate(visit.config.presets or []):
        entries.append(
            AtomEntry(
                id=f"urn:toshokan:opds:{visit.slug}:preset:{number}",
                title=preset.name,
                updated=now,
                content=preset.description or preset.name,
                links=[Link("subsection", visit.url("presets", str(number)), NAVIGATION)],
            )
        )
    feed = Feed(
        id=f"urn:toshokan:opds:{visit.slug}",
        title=visit.config.name,
        icon=visit.config.icon,
        links=[
            Link("self", visit.url(), NAVIGATION),
            Link("start", visit.root, NAVIGATION),
            Link("up", visit.root, NAVIGATION),
            *search_links(visit),
        ],
        entries=entries,
    )
    return feed_response(feed, NAVIGATION, visit.private)


async def source_opensearch(request: Request, visit: CatalogueVisit) -> Response:
    body = atom.opensearch_description(
        visit.config.name,
        f"Search {visit.config.name}.",
        visit.url("search", template=SEARCH_TEMPLATE),
    )
    return Response(body, media_type=atom.OPENSEARCH_TYPE)
