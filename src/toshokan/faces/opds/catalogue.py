"""The Atom catalogue's navigation: the root, one search over every source, a source's menu.

Every source serving is an entry of the root; a source offers its titles and
its presets. Both have an OpenSearch description (readers fill in
``{searchTerms}``) and the template itself, which some readers use directly.
Every list of titles is a navigation feed (:mod:`toshokan.faces.opds.lists`),
so each link to one says so.
"""

import asyncio
import logging
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import HostedSource
from toshokan.core.http import caller_of
from toshokan.errors import HostError
from toshokan.faces.opds import atom
from toshokan.faces.opds.access import opds_caller
from toshokan.faces.opds.atom import NAVIGATION, AtomEntry, Feed, Link
from toshokan.faces.opds.context import (
    PER_SOURCE,
    Ctx,
    cache_control,
    catalogue_base,
    core_of,
    page_of,
    query_of,
)
from toshokan.faces.opds.entries import series_entry
from toshokan.faces.opds.listing import Listed, listed_titles
from toshokan.faces.opds.searches import ordered, search_sort

log = logging.getLogger("toshokan.opds")


def feed_response(feed: Feed, kind: str, private: bool) -> Response:
    return Response(feed.xml(), media_type=kind, headers=cache_control(private))


def search_links(search_base: str) -> list[Link]:
    """The OpenSearch description, and the template some readers use directly."""
    return [
        Link("search", f"{search_base}/opensearch.xml", atom.OPENSEARCH_TYPE, "Search"),
        Link("search", f"{search_base}/search?q={{searchTerms}}", NAVIGATION, "Search"),
    ]


async def root(request: Request, reader: str) -> Response:
    core = core_of(request)
    caller = caller_of(request)
    base = catalogue_base(caller)
    entries = []
    for hosted in core.host.serving():
        config = await core.configuration(hosted)
        lock = " (sign-in required)" if config.auth.required else ""
        entries.append(
            AtomEntry(
                id=f"urn:toshokan:opds:{hosted.slug}",
                title=config.name,
                updated=atom.timestamp(),
                content=f"Browse and search {config.name}{lock}.",
                links=[
                    Link("subsection", f"{base}/{hosted.slug}", NAVIGATION),
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
            Link("self", f"{base}", NAVIGATION),
            Link("start", f"{base}", NAVIGATION),
            Link("search", f"{base}/opensearch.xml", atom.OPENSEARCH_TYPE, "Search every source"),
            Link("search", f"{base}/_search?q={{searchTerms}}", NAVIGATION, "Search every source"),
        ],
        entries=entries,
    )
    return feed_response(feed, NAVIGATION, private=False)


async def root_opensearch(request: Request, reader: str) -> Response:
    core = core_of(request)
    base = catalogue_base(caller_of(request))
    body = atom.opensearch_description(
        core.settings.host.name,
        "Search every source of this host.",
        f"{base}/_search?q={{searchTerms}}",
    )
    return Response(body, media_type=atom.OPENSEARCH_TYPE)


async def root_search(request: Request, reader: str) -> Response:
    """One search over every source that lets this caller in; a source that fails is skipped."""
    core = core_of(request)
    caller = caller_of(request)
    base = catalogue_base(caller)
    query, page = query_of(request), page_of(request)

    async def one(hosted: HostedSource) -> tuple[Ctx, list[Listed], bool] | None:
        try:
            config = await core.configuration(hosted)
            sent = await opds_caller(core, hosted, config, caller)
            ctx = Ctx(core, hosted, config, sent, base, reader)
            body = {
                "query": query,
                "page": page,
                "limit": PER_SOURCE,
                **ordered(search_sort(config)),
            }
            found = (await core.search(hosted.slug, body, ctx.caller)).value
            return ctx, await listed_titles(ctx, found.results), found.more
        except HostError as error:
            log.info("search over every source: %s skipped (%s)", hosted.slug, error.code)
            return None

    answered = [item for item in await asyncio.gather(*map(one, core.host.serving())) if item]
    entries = [
        series_entry(ctx, listed, f"From {ctx.config.name}.")
        for ctx, titles, _ in answered
        for listed in titles
    ]
    more = any(more for _, _, more in answered)
    self_url = f"{base}/_search"
    feed = Feed(
        id=f"urn:toshokan:opds:search:{quote(query)}:{page}",
        title=f"Search: {query}" if query else "Everything",
        links=[
            Link("self", f"{self_url}?{urlencode({'q': query, 'page': page})}", NAVIGATION),
            Link("start", base, NAVIGATION),
            Link("up", base, NAVIGATION),
            *atom.pages(self_url, page, more, NAVIGATION, [("q", query)]),
        ],
        # No itemsPerPage, startIndex or count: a page holds up to PER_SOURCE titles of each
        # source, so it is no window of one sequence those would describe.
        entries=entries,
    )
    return feed_response(feed, NAVIGATION, private=True)


async def source_root(request: Request, ctx: Ctx) -> Response:
    now = atom.timestamp()
    entries = [
        AtomEntry(
            id=f"urn:toshokan:opds:{ctx.slug}:all",
            title="All titles",
            updated=now,
            content=f"Everything in {ctx.config.name}, one page at a time.",
            links=[Link("subsection", ctx.url("all"), NAVIGATION)],
        )
    ]
    for number, preset in enumerate(ctx.config.presets or []):
        entries.append(
            AtomEntry(
                id=f"urn:toshokan:opds:{ctx.slug}:preset:{number}",
                title=preset.name,
                updated=now,
                content=preset.description or preset.name,
                links=[Link("subsection", ctx.url("presets", str(number)), NAVIGATION)],
            )
        )
    feed = Feed(
        id=f"urn:toshokan:opds:{ctx.slug}",
        title=ctx.config.name,
        icon=ctx.config.icon,
        links=[
            Link("self", ctx.url(), NAVIGATION),
            Link("start", ctx.base, NAVIGATION),
            Link("up", ctx.base, NAVIGATION),
            *search_links(ctx.url()),
        ],
        entries=entries,
    )
    return feed_response(feed, NAVIGATION, ctx.private)


async def source_opensearch(request: Request, ctx: Ctx) -> Response:
    body = atom.opensearch_description(
        ctx.config.name, f"Search {ctx.config.name}.", f"{ctx.url('search')}?q={{searchTerms}}"
    )
    return Response(body, media_type=atom.OPENSEARCH_TYPE)
