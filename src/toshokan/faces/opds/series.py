"""The Atom catalogue's series feed (its chapters, the series described in the feed's own
metadata) and a chapter's own feed.

A series feed is an acquisition feed: every entry is a chapter a reader can
open or download (NYPL's parser, following OPDS 1.2, calls a feed acquisition
only when every entry has an acquisition link; an entry describing the series
read as a folder to comiccatcher and as nothing to tap to KOReader). So the
series itself is the feed: its title, summary (``subtitle``), authors, tags
(``category``), cover (``logo``, and image links), thumbnail (``icon``) and its
page on the source's site (``alternate``). Chapters are listed newest first, as
the core orders them, and paged. Chapters whose page count and file are known
without an upstream request carry their PSE stream and acquisition links here
(:mod:`toshokan.faces.opds.chapters`); the others lead to their own feed,
which asks for the page list only when the reader opens it.
"""

import asyncio

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core.progress import ChapterRef
from toshokan.faces.opds import atom
from toshokan.faces.opds.atom import ACQUISITION, NAVIGATION, AtomEntry, Feed, Link
from toshokan.faces.opds.catalogue import feed_response, search_links
from toshokan.faces.opds.chapters import (
    chapter_title,
    downloads,
    listed_chapter,
    page_counts,
    series_page,
)
from toshokan.faces.opds.context import CHAPTERS_PER_PAGE, CatalogueVisit, page_of
from toshokan.faces.opds.entries import (
    acquisition_link,
    categories,
    chapter_entry,
    cover_links,
    first_page_thumbnail,
    stream_link,
)


async def series(request: Request, visit: CatalogueVisit) -> Response:
    manga_slug = request.path_params["manga"]
    found = await series_page(visit, manga_slug, page_of(request))
    manga, page, shown = found.manga, found.page, found.shown
    counts, files, positions = await asyncio.gather(
        page_counts(visit, manga_slug, shown),
        downloads(visit, manga_slug, shown),
        visit.core.progress.apositions(visit.reader, visit.slug, manga_slug),
    )
    url = visit.url("series", manga_slug)
    cover = cover_links(visit, manga.covers[0] if manga.covers else None)
    entries = [
        chapter_entry(
            visit,
            manga,
            manga_slug,
            chapter,
            counts.get(chapter.slug),
            files.get(chapter.slug),
            positions.get(chapter.slug),
        )
        for chapter in shown
    ]
    feed = Feed(
        id=f"urn:toshokan:opds:{visit.slug}:{manga_slug}:page:{page}",
        title=manga.title,
        subtitle=manga.synopsis,
        author=visit.config.name,
        authors=manga.authors,
        categories=categories(visit, manga),
        icon=cover[1].href if cover else None,
        logo=cover[0].href if cover else None,
        updated=atom.timestamp(manga.updatedAt),
        links=[
            Link("self", visit.url("series", manga_slug, query={"page": str(page)}), ACQUISITION),
            Link("start", visit.root, NAVIGATION),
            Link("up", visit.url(), NAVIGATION),
            *search_links(visit),
            *atom.pages(url, page, found.more, ACQUISITION),
            *cover,
            *(
                [Link("alternate", manga.url, "text/html", "On the source's site")]
                if manga.url
                else []
            ),
        ],
        entries=entries,
        total=found.total,
        per_page=CHAPTERS_PER_PAGE,
        start_index=found.start + 1,
    )
    return feed_response(feed, ACQUISITION, found.private)


async def chapter_feed(request: Request, visit: CatalogueVisit) -> Response:
    """One chapter, with the OPDS-PSE link that streams its pages one by one."""
    manga_slug, chapter_slug = request.path_params["manga"], request.path_params["chapter"]
    chapter = await listed_chapter(visit, manga_slug, chapter_slug)
    urls = await visit.source_visit.page_list(manga_slug, chapter_slug)
    download = (await downloads(visit, manga_slug, [chapter])).get(chapter_slug)
    ref = ChapterRef(visit.slug, manga_slug, chapter_slug)
    position = await visit.core.progress.aposition(visit.reader, ref)
    here = visit.url("series", manga_slug, chapter_slug)
    entry = AtomEntry(
        id=f"urn:toshokan:opds:{visit.slug}:{manga_slug}:{chapter_slug}:pages",
        title=chapter_title(chapter),
        updated=atom.timestamp(chapter.date),
        issued=atom.timestamp(chapter.date),
        language=chapter.language,
        content=f"{len(urls)} pages",
        links=[
            stream_link(visit, manga_slug, chapter_slug, len(urls), position),
            *first_page_thumbnail(visit, urls[0] if urls else None),
            *([acquisition_link(download)] if download else []),
            Link("alternate", chapter.url, "text/html", "On the source's site"),
        ],
    )
    feed = Feed(
        id=f"urn:toshokan:opds:{visit.slug}:{manga_slug}:{chapter_slug}",
        title=chapter_title(chapter),
        links=[
            Link("self", here, ACQUISITION),
            Link("start", visit.root, NAVIGATION),
            Link("up", visit.url("series", manga_slug), ACQUISITION),
        ],
        entries=[entry],
    )
    return feed_response(feed, ACQUISITION, private=True)
