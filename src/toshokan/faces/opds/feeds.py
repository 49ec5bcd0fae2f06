"""The OPDS 1.2 catalogue with page streaming, a thin face over the core at ``/_/opds``.

The catalogue a reader walks::

    /_/opds                                   every serving source (navigation)
    /_/opds/_search?q=                        one search over every source
    /_/opds/<slug>                            a source: all titles, its presets
    /_/opds/<slug>/all?sort=&page=            all titles, a facet per declared sort
    /_/opds/<slug>/presets/<n>?page=          one preset's search
    /_/opds/<slug>/search?q=&page=            the source's search
    /_/opds/<slug>/series/<manga>?page=       a series: its details, then its chapters
    /_/opds/<slug>/series/<manga>/<chapter>   a chapter with its OPDS-PSE stream link
                                              (and its file, when the source offers it)
    /_/opds/<slug>/series/<manga>/<chapter>/pages/<n>?maxWidth=   one page image, 0-based

with an OpenSearch description at ``opensearch.xml`` beside the root and each
source. Every list is one page of a search (never a whole source); every
answer comes from the core (search, details, chapters, pages) and every image
from the core's image pipeline, so this face validates, caches and authorises
nothing itself.

A chapter's page count (``pse:count``) needs its page list, which for an
upstream such as MangaDex costs one of a few dozen requests a minute; so a
series lists its chapters as small feeds, and the page list is asked for only
when the reader opens one.
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from toshokan.core import Caller, Core, HostedSource
from toshokan.core.http import caller_of
from toshokan.core.images import clamp_width, image_response, images_of
from toshokan.errors import ChapterNotFound, HostError, InvalidCredentials, InvalidRequest, NotFound
from toshokan.faces.opds import atom
from toshokan.faces.opds.access import challenge, opds_caller
from toshokan.faces.opds.atom import ACQUISITION, NAVIGATION, Entry, Feed, Link
from toshokan.faces.opds.downloads import acquisition_link, downloads_of
from toshokan.models import Chapter, Manga, SearchResponse, SourceConfiguration

log = logging.getLogger("toshokan.opds")

#: Titles per page of a list feed.
PAGE_SIZE = 20
#: Chapters per page of a series feed.
CHAPTERS_PER_PAGE = 50
#: Titles per source in a search over every source.
PER_SOURCE = 10
#: The longest search query the catalogue passes on.
MAX_QUERY = 200
#: The highest page number of any feed.
MAX_PAGE = 10_000
PREFIX = "/_/opds"


@dataclass
class Ctx:
    """One request to a source's part of the catalogue, authorised."""

    core: Core
    hosted: HostedSource
    config: SourceConfiguration
    caller: Caller
    base: str  # the catalogue's address: ``<host>/_/opds``

    @property
    def slug(self) -> str:
        return self.hosted.slug

    @property
    def private(self) -> bool:
        return self.config.auth.required

    def url(self, *parts: str) -> str:
        return "/".join([self.base, quote(self.slug), *(quote(p) for p in parts)])


def core_of(request: Request) -> Core:
    core: Core = request.app.state.core
    return core


def catalogue_base(caller: Caller) -> str:
    return f"{caller.base_url.rstrip('/')}{PREFIX}"


def feed_response(feed: Feed, kind: str, private: bool) -> Response:
    return Response(
        feed.xml(),
        media_type=kind,
        headers={"Cache-Control": "private, no-cache" if private else "public, max-age=60"},
    )


def source_route(handler: Callable[[Request, Ctx], Awaitable[Response]]) -> Callable[..., Any]:
    """Resolve and authorise the source; a refusal becomes the Basic challenge readers answer."""

    async def endpoint(request: Request) -> Response:
        core = core_of(request)
        hosted = core.source(request.path_params["source"])
        config = await core.configuration(hosted)
        try:
            caller = await opds_caller(core, hosted, config, caller_of(request))
            if config.auth.required:
                await core.authorize(hosted, config, caller)
            return await handler(request, Ctx(core, hosted, config, caller, catalogue_base(caller)))
        except InvalidCredentials as refused:
            raise challenge(config, refused.message) from None

    return endpoint


def page_of(request: Request) -> int:
    text = request.query_params.get("page", "1")
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_PAGE:
        raise InvalidRequest(f"page must be a whole number from 1 to {MAX_PAGE}.")
    return int(text)


def query_of(request: Request, name: str = "q") -> str:
    query = request.query_params.get(name, "").strip()
    if len(query) > MAX_QUERY:
        raise InvalidRequest(f"A search is at most {MAX_QUERY} characters.")
    return query


def search_links(search_base: str) -> list[Link]:
    """The OpenSearch description, and the template some readers use directly."""
    return [
        Link("search", f"{search_base}/opensearch.xml", atom.OPENSEARCH_TYPE, "Search"),
        Link("search", f"{search_base}/search?q={{searchTerms}}", ACQUISITION, "Search"),
    ]


# -- the root ----------------------------------------------------------------------------


async def root(request: Request) -> Response:
    core = core_of(request)
    caller = caller_of(request)
    base = catalogue_base(caller)
    entries = []
    for hosted in core.host.serving():
        config = await core.configuration(hosted)
        lock = " (sign-in required)" if config.auth.required else ""
        entries.append(
            Entry(
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
            Link("search", f"{base}/_search?q={{searchTerms}}", ACQUISITION, "Search every source"),
        ],
        entries=entries,
    )
    return feed_response(feed, NAVIGATION, private=False)


async def root_opensearch(request: Request) -> Response:
    core = core_of(request)
    base = catalogue_base(caller_of(request))
    body = atom.opensearch_description(
        core.settings.host.name,
        "Search every source of this host.",
        f"{base}/_search?q={{searchTerms}}",
    )
    return Response(body, media_type=atom.OPENSEARCH_TYPE)


async def root_search(request: Request) -> Response:
    """One search over every source that lets this caller in; a source that fails is skipped."""
    core = core_of(request)
    caller = caller_of(request)
    base = catalogue_base(caller)
    query, page = query_of(request), page_of(request)

    async def one(hosted: HostedSource) -> tuple[Ctx, SearchResponse] | None:
        try:
            config = await core.configuration(hosted)
            ctx = Ctx(core, hosted, config, await opds_caller(core, hosted, config, caller), base)
            body = {"query": query, "page": page, "limit": PER_SOURCE, "sort": search_sort(config)}
            return ctx, (await core.search(hosted.slug, body, ctx.caller)).value
        except HostError as error:
            log.info("search over every source: %s skipped (%s)", hosted.slug, error.code)
            return None

    found = await asyncio.gather(*(one(h) for h in core.host.serving()))
    entries = [
        series_entry(ctx, result.slug, result.title, result.cover, f"From {ctx.config.name}.")
        for item in found
        if item is not None
        for ctx, response in [item]
        for result in response.results
    ]
    more = any(item is not None and item[1].more for item in found)
    self_url = f"{base}/_search"
    feed = Feed(
        id=f"urn:toshokan:opds:search:{quote(query)}:{page}",
        title=f"Search: {query}" if query else "Everything",
        links=[
            Link("self", f"{self_url}?{urlencode({'q': query, 'page': page})}", ACQUISITION),
            Link("start", base, NAVIGATION),
            Link("up", base, NAVIGATION),
            *atom.pages(self_url, page, more, ACQUISITION, [("q", query)]),
        ],
        entries=entries,
        per_page=PER_SOURCE,
        start_index=(page - 1) * PER_SOURCE + 1,
    )
    return feed_response(feed, ACQUISITION, private=True)


# -- a source ----------------------------------------------------------------------------


def search_sort(config: SourceConfiguration) -> str:
    sorts = [str(s) for s in config.search.sort]
    return "relevance" if "relevance" in sorts else sorts[0]


def browse_sort(config: SourceConfiguration) -> str:
    sorts = [str(s) for s in config.search.sort]
    for preferred in ("latest", "updatedAt", "title"):
        if preferred in sorts:
            return preferred
    return sorts[0]


async def source_root(request: Request, ctx: Ctx) -> Response:
    now = atom.timestamp()
    entries = [
        Entry(
            id=f"urn:toshokan:opds:{ctx.slug}:all",
            title="All titles",
            updated=now,
            content=f"Everything in {ctx.config.name}, one page at a time.",
            links=[Link("subsection", ctx.url("all"), ACQUISITION)],
        )
    ]
    for number, preset in enumerate(ctx.config.presets or []):
        entries.append(
            Entry(
                id=f"urn:toshokan:opds:{ctx.slug}:preset:{number}",
                title=preset.name,
                updated=now,
                content=preset.description or preset.name,
                links=[Link("subsection", ctx.url("presets", str(number)), ACQUISITION)],
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


async def all_titles(request: Request, ctx: Ctx) -> Response:
    sort = request.query_params.get("sort") or browse_sort(ctx.config)
    page = page_of(request)
    body = {"query": "", "page": page, "limit": PAGE_SIZE, "sort": sort}
    facets = [
        Link(
            atom.REL_FACET,
            f"{ctx.url('all')}?{urlencode({'sort': str(option)})}",
            ACQUISITION,
            SORT_LABELS.get(str(option), str(option)),
            extra={
                f"{{{atom.OPDS}}}facetGroup": "Sort",
                **({f"{{{atom.OPDS}}}activeFacet": "true"} if str(option) == sort else {}),
            },
        )
        for option in ctx.config.search.sort
    ]
    return await search_feed(ctx, body, "All titles", ctx.url("all"), [("sort", sort)], facets)


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


async def preset(request: Request, ctx: Ctx) -> Response:
    number, name, body = preset_search(request, ctx)
    return await search_feed(ctx, body, name, ctx.url("presets", number), [])


async def source_search(request: Request, ctx: Ctx) -> Response:
    query = query_of(request)
    body = {"query": query, "page": page_of(request), "limit": PAGE_SIZE}
    body["sort"] = search_sort(ctx.config) if query else browse_sort(ctx.config)
    title = f"Search: {query}" if query else "All titles"
    return await search_feed(ctx, body, title, ctx.url("search"), [("q", query)])


async def search_feed(
    ctx: Ctx,
    body: dict[str, Any],
    title: str,
    url: str,
    query: list[tuple[str, str]],
    facets: list[Link] | None = None,
) -> Response:
    answer = await ctx.core.search(ctx.slug, body, ctx.caller)
    result = answer.value
    page = int(body["page"])
    self_query = urlencode([*query, ("page", str(page))])
    feed = Feed(
        id=f"urn:toshokan:opds:{ctx.slug}:{quote(url.rsplit('/_/opds/', 1)[-1])}:{self_query}",
        title=f"{ctx.config.name}: {title}",
        links=[
            Link("self", f"{url}?{self_query}", ACQUISITION),
            Link("start", ctx.base, NAVIGATION),
            Link("up", ctx.url(), NAVIGATION),
            *search_links(ctx.url()),
            *atom.pages(url, page, result.more, ACQUISITION, query),
            *(facets or []),
        ],
        entries=[series_entry(ctx, e.slug, e.title, e.cover) for e in result.results],
        per_page=PAGE_SIZE,
        start_index=(page - 1) * PAGE_SIZE + 1,
        # The exact count when this is the last page; unknown (omitted) otherwise.
        total=(page - 1) * PAGE_SIZE + len(result.results) if not result.more else None,
    )
    return feed_response(feed, ACQUISITION, answer.private or ctx.private)


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


def cover_links(ctx: Ctx, cover: str | None) -> list[Link]:
    """A cover and its thumbnail, both served by the host's image pipeline through signed links."""
    if not cover:
        return []
    images = images_of(ctx.core)
    full = images.signed_url(ctx.caller.base_url, ctx.slug, cover)
    small = images.signed_url(ctx.caller.base_url, ctx.slug, cover, thumbnail=True)
    return [Link(atom.REL_IMAGE, full, "image/jpeg"), Link(atom.REL_THUMBNAIL, small, "image/jpeg")]


def series_entry(
    ctx: Ctx, manga: str, title: str, cover: str | None, content: str | None = None
) -> Entry:
    return Entry(
        id=f"urn:toshokan:opds:{ctx.slug}:{manga}",
        title=title,
        updated=atom.timestamp(),
        content=content or title,
        links=[Link("subsection", ctx.url("series", manga), ACQUISITION), *cover_links(ctx, cover)],
    )


# -- a series and its chapters -------------------------------------------------------------


def chapter_title(chapter: Chapter) -> str:
    """A title that tells versions apart: number, title, group and language."""
    number = f"{chapter.number:g}"
    title = chapter.title.strip()
    head = f"Ch. {number}"
    if (
        title
        and title != "No Title"
        and title.lower() not in (f"chapter {number}", f"ch. {number}")
    ):
        head = f"{head}: {title}"
    group = chapter.scanlator.strip() or "Unknown Scanlator"
    return f"{head} [{group}, {chapter.language}]"


def details_entry(ctx: Ctx, manga: Manga) -> Entry:
    names = {tag.slug: tag.name for tag in ctx.config.search.tags}
    return Entry(
        id=f"urn:toshokan:opds:{ctx.slug}:{manga.slug}:details",
        title=manga.title,
        updated=atom.timestamp(manga.updatedAt),
        content=manga.synopsis,
        authors=manga.authors,
        categories=[(tag, names.get(tag, tag)) for tag in manga.tags],
        links=[
            *cover_links(ctx, manga.covers[0] if manga.covers else None),
            Link("alternate", manga.url, "text/html", "On the source's site"),
        ],
    )


async def series(request: Request, ctx: Ctx) -> Response:
    manga_slug = request.path_params["manga"]
    page = page_of(request)
    details, listed = await asyncio.gather(
        ctx.core.manga(ctx.slug, manga_slug, ctx.caller),
        ctx.core.chapters(ctx.slug, manga_slug, ctx.caller),
    )
    manga, chapters = details.value, listed.value
    start = (page - 1) * CHAPTERS_PER_PAGE
    shown = chapters[start : start + CHAPTERS_PER_PAGE]
    files = await downloads_of(ctx.core, ctx.slug, ctx.caller, manga_slug, shown)
    url = ctx.url("series", manga_slug)
    entries = [details_entry(ctx, manga)] if page == 1 else []
    entries += [
        Entry(
            id=f"urn:toshokan:opds:{ctx.slug}:{manga_slug}:{chapter.slug}",
            title=chapter_title(chapter),
            updated=atom.timestamp(chapter.date),
            issued=atom.timestamp(chapter.date),
            language=chapter.language,
            content=f"{manga.title}, {chapter_title(chapter)}",
            links=[
                Link("subsection", ctx.url("series", manga_slug, chapter.slug), ACQUISITION),
                *([acquisition_link(files[chapter.slug])] if chapter.slug in files else []),
            ],
        )
        for chapter in shown
    ]
    feed = Feed(
        id=f"urn:toshokan:opds:{ctx.slug}:{manga_slug}:page:{page}",
        title=manga.title,
        subtitle=manga.synopsis,
        author=", ".join(manga.authors) or ctx.config.name,
        updated=atom.timestamp(manga.updatedAt),
        links=[
            Link("self", f"{url}?page={page}", ACQUISITION),
            Link("start", ctx.base, NAVIGATION),
            Link("up", ctx.url(), NAVIGATION),
            *search_links(ctx.url()),
            *atom.pages(url, page, start + CHAPTERS_PER_PAGE < len(chapters), ACQUISITION),
        ],
        entries=entries,
        total=len(chapters),
        per_page=CHAPTERS_PER_PAGE,
        start_index=start + 1,
    )
    private = details.private or listed.private or ctx.private
    return feed_response(feed, ACQUISITION, private)


async def listed_chapter(ctx: Ctx, manga_slug: str, chapter_slug: str) -> Chapter:
    """The chapter ``chapter_slug`` as the series' chapter list has it (cached by the core)."""
    listed = await ctx.core.chapters(ctx.slug, manga_slug, ctx.caller)
    chapter = next((c for c in listed.value if c.slug == chapter_slug), None)
    if chapter is None:
        raise ChapterNotFound()
    return chapter


async def chapter_feed(request: Request, ctx: Ctx) -> Response:
    """One chapter, with the OPDS-PSE link that streams its pages one by one."""
    manga_slug, chapter_slug = request.path_params["manga"], request.path_params["chapter"]
    chapter = await listed_chapter(ctx, manga_slug, chapter_slug)
    pipeline = images_of(ctx.core)
    urls = await pipeline.page_urls(ctx.slug, manga_slug, chapter_slug, ctx.caller)
    files = await downloads_of(ctx.core, ctx.slug, ctx.caller, manga_slug, [chapter])
    here = ctx.url("series", manga_slug, chapter_slug)
    stream = Link(
        atom.REL_STREAM,
        f"{here}/pages/{{pageNumber}}?maxWidth={{maxWidth}}",
        "image/jpeg",
        extra={f"{{{atom.PSE}}}count": str(len(urls))},
    )
    thumbnail = (
        [
            Link(
                atom.REL_THUMBNAIL,
                pipeline.signed_url(ctx.caller.base_url, ctx.slug, urls[0], thumbnail=True),
                "image/jpeg",
            )
        ]
        if urls
        else []
    )
    entry = Entry(
        id=f"urn:toshokan:opds:{ctx.slug}:{manga_slug}:{chapter_slug}:pages",
        title=chapter_title(chapter),
        updated=atom.timestamp(chapter.date),
        issued=atom.timestamp(chapter.date),
        language=chapter.language,
        content=f"{len(urls)} pages",
        links=[
            stream,
            *thumbnail,
            *(acquisition_link(download) for download in files.values()),
            Link("alternate", chapter.url, "text/html", "On the source's site"),
        ],
    )
    feed = Feed(
        id=f"urn:toshokan:opds:{ctx.slug}:{manga_slug}:{chapter_slug}",
        title=chapter_title(chapter),
        links=[
            Link("self", here, ACQUISITION),
            Link("start", ctx.base, NAVIGATION),
            Link("up", ctx.url("series", manga_slug), ACQUISITION),
        ],
        entries=[entry],
    )
    return feed_response(feed, ACQUISITION, private=True)


async def page_image(request: Request, ctx: Ctx) -> Response:
    """Page ``n`` (0-based, as PSE counts) in a format PSE allows, at most ``maxWidth`` wide."""
    params = request.path_params
    number = params["number"]
    if not (number.isascii() and number.isdigit()) or len(number) > 6:
        raise NotFound("A page number is a whole number from 0.")
    pipeline = images_of(ctx.core)
    urls = await pipeline.page_urls(ctx.slug, params["manga"], params["chapter"], ctx.caller)
    index = int(number)
    if index >= len(urls):
        raise NotFound(f"This chapter has pages 0 to {len(urls) - 1}.")
    width = clamp_width(request.query_params.get("maxWidth"))
    picture = await pipeline.render(ctx.hosted, urls[index], ctx.caller.base_url, width=width)
    cache = "private, max-age=3600" if ctx.private else "public, max-age=3600"
    return image_response(picture, cache)


def atom_routes() -> list[BaseRoute]:
    """Routes under ``/_/opds`` of the Atom catalogue."""
    source = "/{source}"
    series_path = f"{source}/series/{{manga}}"
    return [
        Route("/", root, methods=["GET"]),
        Route("/opensearch.xml", root_opensearch, methods=["GET"]),
        Route("/_search", root_search, methods=["GET"]),
        Route(source, source_route(source_root), methods=["GET"]),
        Route(f"{source}/opensearch.xml", source_route(source_opensearch), methods=["GET"]),
        Route(f"{source}/all", source_route(all_titles), methods=["GET"]),
        Route(f"{source}/presets/{{number}}", source_route(preset), methods=["GET"]),
        Route(f"{source}/search", source_route(source_search), methods=["GET"]),
        Route(series_path, source_route(series), methods=["GET"]),
        Route(f"{series_path}/{{chapter}}", source_route(chapter_feed), methods=["GET"]),
        Route(
            f"{series_path}/{{chapter}}/pages/{{number}}",
            source_route(page_image),
            methods=["GET"],
        ),
    ]
