"""The same catalogue as OPDS 2.0 (JSON) at ``/_/opds/v2``.

The walk mirrors the Atom catalogue: the root navigates to each source; a
source to its titles and presets; lists are pages of a search with ``next``,
``previous`` and ``first`` links and the source's sorts as facets; a series
lists its chapters as publications, each opened through a Readium Web
Publication Manifest with the DiViNa profile whose ``readingOrder`` is the
chapter's page images (the same image endpoint the Atom catalogue streams).
Searches are templated links (``{?query}``), as OPDS 2.0 has it.
"""

import json
from typing import Any
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from toshokan.core.http import caller_of
from toshokan.core.images import images_of
from toshokan.faces.opds import atom
from toshokan.faces.opds.downloads import downloads_of
from toshokan.faces.opds.feeds import (
    CHAPTERS_PER_PAGE,
    PAGE_SIZE,
    SORT_LABELS,
    Ctx,
    browse_sort,
    catalogue_base,
    chapter_title,
    core_of,
    listed_chapter,
    page_of,
    preset_search,
    query_of,
    search_sort,
    source_route,
)

OPDS_JSON = "application/opds+json"
PUBLICATION_JSON = "application/opds-publication+json"
DIVINA = "application/divina+json"
OPEN_ACCESS = "http://opds-spec.org/acquisition/open-access"
ACQUIRE = atom.REL_ACQUISITION
WEBPUB_CONTEXT = "https://readium.org/webpub-manifest/context.jsonld"
DIVINA_PROFILE = "https://readium.org/webpub-manifest/profiles/divina"


def json_response(document: dict[str, Any], media_type: str, private: bool) -> Response:
    return Response(
        json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode(),
        media_type=media_type,
        headers={"Cache-Control": "private, no-cache" if private else "public, max-age=60"},
    )


def link(href: str, type_: str = OPDS_JSON, rel: str | None = None, **extra: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"href": href, "type": type_}
    if rel:
        found["rel"] = rel
    found.update(extra)
    return found


def v2_url(ctx: Ctx, *parts: str) -> str:
    return "/".join([ctx.base, "v2", quote(ctx.slug), *(quote(p) for p in parts)])


def pagination(
    url: str, page: int, more: bool, query: list[tuple[str, str]]
) -> list[dict[str, Any]]:
    def at(number: int) -> str:
        return f"{url}?{urlencode([*query, ('page', str(number))])}"

    links = [link(at(1), rel="first")]
    if page > 1:
        links.append(link(at(page - 1), rel="previous"))
    if more:
        links.append(link(at(page + 1), rel="next"))
    return links


async def root(request: Request) -> Response:
    core = core_of(request)
    base = f"{catalogue_base(caller_of(request))}/v2"
    navigation = []
    for hosted in core.host.serving():
        config = await core.configuration(hosted)
        navigation.append(
            {"href": f"{base}/{hosted.slug}", "title": config.name, "type": OPDS_JSON}
        )
    document = {
        "metadata": {"title": core.settings.host.name},
        "links": [link(base, rel="self"), link(base, rel="start")],
        "navigation": navigation,
    }
    return json_response(document, OPDS_JSON, private=False)


async def source_root(request: Request, ctx: Ctx) -> Response:
    navigation = [{"href": v2_url(ctx, "all"), "title": "All titles", "type": OPDS_JSON}]
    navigation += [
        {"href": v2_url(ctx, "presets", str(n)), "title": preset.name, "type": OPDS_JSON}
        for n, preset in enumerate(ctx.config.presets or [])
    ]
    document = {
        "metadata": {"title": ctx.config.name},
        "links": [
            link(v2_url(ctx), rel="self"),
            link(f"{ctx.base}/v2", rel="start"),
            link(f"{ctx.base}/v2", rel="up"),
            search_link(ctx),
        ],
        "navigation": navigation,
    }
    return json_response(document, OPDS_JSON, ctx.private)


def search_link(ctx: Ctx) -> dict[str, Any]:
    return link(v2_url(ctx, "search") + "{?query}", rel="search", templated=True)


async def all_titles(request: Request, ctx: Ctx) -> Response:
    sort = request.query_params.get("sort") or browse_sort(ctx.config)
    body = {"query": "", "page": page_of(request), "limit": PAGE_SIZE, "sort": sort}
    facets = [
        {
            "metadata": {"title": "Sort"},
            "links": [
                link(
                    f"{v2_url(ctx, 'all')}?{urlencode({'sort': str(option)})}",
                    title=SORT_LABELS.get(str(option), str(option)),
                    **({"rel": "self"} if str(option) == sort else {}),
                )
                for option in ctx.config.search.sort
            ],
        }
    ]
    return await publications(ctx, body, "All titles", v2_url(ctx, "all"), [("sort", sort)], facets)


async def preset(request: Request, ctx: Ctx) -> Response:
    number, name, body = preset_search(request, ctx)
    return await publications(ctx, body, name, v2_url(ctx, "presets", number), [])


async def search(request: Request, ctx: Ctx) -> Response:
    query = query_of(request, "query")
    body = {"query": query, "page": page_of(request), "limit": PAGE_SIZE}
    body["sort"] = search_sort(ctx.config) if query else browse_sort(ctx.config)
    title = f"Search: {query}" if query else "All titles"
    return await publications(ctx, body, title, v2_url(ctx, "search"), [("query", query)])


async def publications(
    ctx: Ctx,
    body: dict[str, Any],
    title: str,
    url: str,
    query: list[tuple[str, str]],
    facets: list[dict[str, Any]] | None = None,
) -> Response:
    answer = await ctx.core.search(ctx.slug, body, ctx.caller)
    result = answer.value
    page = int(body["page"])
    metadata: dict[str, Any] = {
        "title": f"{ctx.config.name}: {title}",
        "itemsPerPage": PAGE_SIZE,
        "currentPage": page,
    }
    if not result.more:
        metadata["numberOfItems"] = (page - 1) * PAGE_SIZE + len(result.results)
    document: dict[str, Any] = {
        "metadata": metadata,
        "links": [
            link(f"{url}?{urlencode([*query, ('page', str(page))])}", rel="self"),
            link(f"{ctx.base}/v2", rel="start"),
            link(v2_url(ctx), rel="up"),
            search_link(ctx),
            *pagination(url, page, result.more, query),
        ],
        "publications": [series_publication(ctx, e.slug, e.title, e.cover) for e in result.results],
    }
    if facets:
        document["facets"] = facets
    return json_response(document, OPDS_JSON, answer.private or ctx.private)


def images(ctx: Ctx, cover: str | None) -> list[dict[str, Any]]:
    if not cover:
        return []
    pipeline = images_of(ctx.core)
    base = ctx.caller.base_url
    return [
        link(pipeline.signed_url(base, ctx.slug, cover, thumbnail=True), "image/jpeg", width=300),
        link(pipeline.signed_url(base, ctx.slug, cover), "image/jpeg"),
    ]


def series_publication(ctx: Ctx, manga: str, title: str, cover: str | None) -> dict[str, Any]:
    url = v2_url(ctx, "series", manga)
    publication: dict[str, Any] = {
        "metadata": {"title": title, "identifier": f"urn:toshokan:{ctx.slug}:{manga}"},
        "links": [
            link(url, rel="subsection"),
            link(url, rel="http://opds-spec.org/acquisition"),
        ],
    }
    found = images(ctx, cover)
    if found:
        publication["images"] = found
    return publication


async def series(request: Request, ctx: Ctx) -> Response:
    manga_slug = request.path_params["manga"]
    page = page_of(request)
    details = await ctx.core.manga(ctx.slug, manga_slug, ctx.caller)
    listed = await ctx.core.chapters(ctx.slug, manga_slug, ctx.caller)
    manga, chapters = details.value, listed.value
    start = (page - 1) * CHAPTERS_PER_PAGE
    url = v2_url(ctx, "series", manga_slug)
    cover = images(ctx, manga.covers[0] if manga.covers else None)
    names = {tag.slug: tag.name for tag in ctx.config.search.tags}
    shown = chapters[start : start + CHAPTERS_PER_PAGE]
    files = await downloads_of(ctx.core, ctx.slug, ctx.caller, manga_slug, shown)
    entries = []
    for chapter in shown:
        metadata: dict[str, Any] = {
            "title": chapter_title(chapter),
            "identifier": f"urn:toshokan:{ctx.slug}:{manga_slug}:{chapter.slug}",
            "language": chapter.language,
            "published": atom.timestamp(chapter.date),
            "modified": atom.timestamp(chapter.date),
            "belongsTo": {"series": [{"name": manga.title, "position": chapter.number}]},
        }
        if manga.authors:
            metadata["author"] = manga.authors
        if manga.synopsis:
            metadata["description"] = manga.synopsis
        if manga.tags:
            metadata["subject"] = [{"name": names.get(tag, tag), "code": tag} for tag in manga.tags]
        manifest = v2_url(ctx, "series", manga_slug, chapter.slug, "manifest.json")
        publication: dict[str, Any] = {
            "metadata": metadata,
            "links": [link(manifest, DIVINA, rel=OPEN_ACCESS)],
        }
        if chapter.slug in files:
            file = files[chapter.slug]
            publication["links"].append(link(file.url, file.media_type, rel=ACQUIRE))
        if cover:
            publication["images"] = cover
        entries.append(publication)
    more = start + CHAPTERS_PER_PAGE < len(chapters)
    document = {
        "metadata": {
            "title": manga.title,
            "description": manga.synopsis,
            "numberOfItems": len(chapters),
            "itemsPerPage": CHAPTERS_PER_PAGE,
            "currentPage": page,
        },
        "links": [
            link(f"{url}?page={page}", rel="self"),
            link(f"{ctx.base}/v2", rel="start"),
            link(v2_url(ctx), rel="up"),
            search_link(ctx),
            link(manga.url, "text/html", rel="alternate"),
            *pagination(url, page, more, []),
        ],
        "publications": entries,
    }
    return json_response(document, OPDS_JSON, details.private or listed.private or ctx.private)


async def manifest(request: Request, ctx: Ctx) -> Response:
    """A chapter as a DiViNa publication: its pages, in order, from the host's image endpoint."""
    manga_slug, chapter_slug = request.path_params["manga"], request.path_params["chapter"]
    chapter = await listed_chapter(ctx, manga_slug, chapter_slug)
    urls = await images_of(ctx.core).page_urls(ctx.slug, manga_slug, chapter_slug, ctx.caller)
    pages = ctx.url("series", manga_slug, chapter_slug, "pages")
    here = v2_url(ctx, "series", manga_slug, chapter_slug, "manifest.json")
    document = {
        "@context": WEBPUB_CONTEXT,
        "metadata": {
            "@type": "http://schema.org/ComicStory",
            "conformsTo": DIVINA_PROFILE,
            "title": chapter_title(chapter),
            "identifier": f"urn:toshokan:{ctx.slug}:{manga_slug}:{chapter_slug}",
            "language": chapter.language,
            "published": atom.timestamp(chapter.date),
            "numberOfPages": len(urls),
        },
        "links": [link(here, DIVINA, rel="self")],
        "readingOrder": [{"href": f"{pages}/{n}", "type": "image/jpeg"} for n in range(len(urls))],
    }
    return json_response(document, DIVINA, private=True)


def v2_routes() -> list[BaseRoute]:
    """Routes under ``/_/opds``: ``/v2`` and below."""
    source = "/v2/{source}"
    series_path = f"{source}/series/{{manga}}"
    return [
        Route("/v2", root, methods=["GET"]),
        Route(source, source_route(source_root), methods=["GET"]),
        Route(f"{source}/all", source_route(all_titles), methods=["GET"]),
        Route(f"{source}/presets/{{number}}", source_route(preset), methods=["GET"]),
        Route(f"{source}/search", source_route(search), methods=["GET"]),
        Route(series_path, source_route(series), methods=["GET"]),
        Route(f"{series_path}/{{chapter}}/manifest.json", source_route(manifest), methods=["GET"]),
    ]
