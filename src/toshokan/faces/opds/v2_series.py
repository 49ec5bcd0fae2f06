"""The OPDS 2.0 series feed (its chapters as publications) and a chapter's DiViNa manifest.

Each chapter is opened through a Readium Web Publication Manifest with the
DiViNa profile whose ``readingOrder`` is the chapter's page images, the same
image endpoint the Atom catalogue streams. A chapter whose file is known
without an upstream request (:mod:`toshokan.faces.opds.chapters`) also carries
its acquisition link, in the feed and in its manifest.
"""

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import Download
from toshokan.faces.opds import atom
from toshokan.faces.opds.chapters import chapter_title, downloads, listed_chapter, series_page
from toshokan.faces.opds.context import CHAPTERS_PER_PAGE, CatalogueVisit, page_of
from toshokan.faces.opds.v2_documents import (
    DIVINA,
    DIVINA_PROFILE,
    OPDS_JSON,
    OPEN_ACCESS,
    WEBPUB_CONTEXT,
    json_response,
    link,
    pagination,
    search_link,
    way_back,
)
from toshokan.faces.opds.v2_progression import progression_links
from toshokan.models import Chapter, Manga


def images(visit: CatalogueVisit, cover: str | None) -> list[dict[str, Any]]:
    if not cover:
        return []
    pipeline = visit.core.images
    base = visit.caller.base_url
    return [
        link(pipeline.signed_url(base, visit.slug, cover, thumbnail=True), "image/jpeg", width=300),
        link(pipeline.signed_url(base, visit.slug, cover), "image/jpeg"),
    ]


def described(visit: CatalogueVisit, metadata: dict[str, Any], manga: Manga) -> dict[str, Any]:
    """``metadata`` with the series' authors, summary and tags (by the source's names)."""
    names = {tag.slug: tag.name for tag in visit.config.search.tags}
    if manga.authors:
        metadata["author"] = manga.authors
    if manga.synopsis:
        metadata["description"] = manga.synopsis
    if manga.tags:
        metadata["subject"] = [{"name": names.get(tag, tag), "code": tag} for tag in manga.tags]
    return metadata


def acquisition(file: Download) -> dict[str, Any]:
    """The chapter's file, to download whole."""
    return link(file.url, file.media_type, rel=atom.REL_ACQUISITION)


def chapter_publication(
    visit: CatalogueVisit, manga: Manga, chapter: Chapter, file: Download | None, cover: list[Any]
) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "title": chapter_title(chapter),
        "identifier": f"urn:toshokan:{visit.slug}:{manga.slug}:{chapter.slug}",
        "language": chapter.language,
        "published": atom.timestamp(chapter.date),
        "modified": atom.timestamp(chapter.date),
        "belongsTo": {"series": [{"name": manga.title, "position": chapter.number}]},
    }
    described(visit, metadata, manga)
    manifest = visit.v2_url("series", manga.slug, chapter.slug, "manifest.json")
    links = [
        link(manifest, DIVINA, rel=OPEN_ACCESS),
        *progression_links(visit, manga.slug, chapter.slug),
    ]
    if file is not None:
        links.append(acquisition(file))
    publication: dict[str, Any] = {"metadata": metadata, "links": links}
    if cover:
        publication["images"] = cover
    return publication


async def series(request: Request, visit: CatalogueVisit) -> Response:
    manga_slug = request.path_params["manga"]
    found = await series_page(visit, manga_slug, page_of(request))
    manga, page = found.manga, found.page
    url = visit.v2_url("series", manga_slug)
    cover = images(visit, manga.covers[0] if manga.covers else None)
    files = await downloads(visit, manga_slug, found.shown)
    document: dict[str, Any] = {
        "metadata": {
            "title": manga.title,
            "description": manga.synopsis,
            "numberOfItems": found.total,
            "itemsPerPage": CHAPTERS_PER_PAGE,
            "currentPage": page,
        },
        "links": [
            link(visit.v2_url("series", manga_slug, query={"page": str(page)}), rel="self"),
            link(visit.v2_root, rel="start"),
            link(visit.v2_url(), rel="up"),
            search_link(visit),
            link(manga.url, "text/html", rel="alternate"),
            *pagination(url, page, found.more, []),
        ],
    }
    if found.shown:
        document["publications"] = [
            chapter_publication(visit, manga, chapter, files.get(chapter.slug), cover)
            for chapter in found.shown
        ]
    else:  # no chapters, or a page past the last: a feed holds something, a way back
        document["navigation"] = [way_back(visit, url, page, [])]
    return json_response(document, OPDS_JSON, found.private)


async def manifest(request: Request, visit: CatalogueVisit) -> Response:
    """A chapter as a DiViNa publication: its pages, in order, from the host's image endpoint,
    and its file when the source offers one: readers that open the manifest for a detail view
    (comiccatcher) take their Download button from its links, as from Komga's."""
    manga_slug, chapter_slug = request.path_params["manga"], request.path_params["chapter"]
    chapter = await listed_chapter(visit, manga_slug, chapter_slug)
    urls, files = await asyncio.gather(
        visit.source_visit.page_list(manga_slug, chapter_slug),
        downloads(visit, manga_slug, [chapter]),
    )
    file = files.get(chapter_slug)
    here = visit.v2_url("series", manga_slug, chapter_slug, "manifest.json")
    document = {
        "@context": WEBPUB_CONTEXT,
        "metadata": {
            "@type": "http://schema.org/ComicStory",
            "conformsTo": DIVINA_PROFILE,
            "title": chapter_title(chapter),
            "identifier": f"urn:toshokan:{visit.slug}:{manga_slug}:{chapter_slug}",
            "language": chapter.language,
            "published": atom.timestamp(chapter.date),
            "numberOfPages": len(urls),
        },
        "links": [
            link(here, DIVINA, rel="self"),
            *progression_links(visit, manga_slug, chapter_slug),
            *([acquisition(file)] if file is not None else []),
        ],
        "readingOrder": [
            {
                "href": visit.url("series", manga_slug, chapter_slug, "pages", str(n)),
                "type": "image/jpeg",
            }
            for n in range(len(urls))
        ],
    }
    return json_response(document, DIVINA, private=True)
