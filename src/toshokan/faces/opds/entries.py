"""The Atom entries of the catalogue: a title in a list, a chapter.

A chapter entry that knows its page count carries the OPDS-PSE stream link
itself (``pse:count``, ``{pageNumber}`` 0-based, ``{maxWidth}``), as Komga's
and Kavita's do, so a reader streams it straight from the series feed; one
that does not (a remote source, see :mod:`toshokan.faces.opds.chapters`)
leads to a one-entry feed that carries it.
"""

from datetime import UTC, datetime

from toshokan.core import Download
from toshokan.core.progress import Position
from toshokan.faces.opds import atom
from toshokan.faces.opds.atom import ACQUISITION, AtomEntry, Link
from toshokan.faces.opds.chapters import Pages, chapter_title
from toshokan.faces.opds.context import CatalogueVisit
from toshokan.faces.opds.listed import Listed
from toshokan.models import Chapter, Manga

#: The OPDS-PSE stream template after a chapter's ``pages``: the reader fills both in.
PAGE_TEMPLATE = "/{pageNumber}?maxWidth={maxWidth}"


def cover_links(visit: CatalogueVisit, cover: str | None) -> list[Link]:
    """A cover and its thumbnail, both served by the host's image pipeline through signed links."""
    if not cover:
        return []
    images = visit.core.images
    full = images.signed_url(visit.caller.base_url, visit.slug, cover)
    small = images.signed_url(visit.caller.base_url, visit.slug, cover, thumbnail=True)
    return [Link(atom.REL_IMAGE, full, "image/jpeg"), Link(atom.REL_THUMBNAIL, small, "image/jpeg")]


def categories(visit: CatalogueVisit, manga: Manga) -> list[tuple[str, str]]:
    """The title's tags as (term, label): the source's names for its tag slugs."""
    names = {tag.slug: tag.name for tag in visit.config.search.tags}
    return [(tag, names.get(tag, tag)) for tag in manga.tags]


def series_entry(visit: CatalogueVisit, listed: Listed, content: str | None = None) -> AtomEntry:
    """A title in a list (a navigation feed): what the search answered, and its summary and
    tags when the list has them. No authors: with them and no acquisition link, Readium's
    readers take the entry for a book (see :mod:`toshokan.faces.opds.lists`)."""
    details = listed.details
    return AtomEntry(
        id=f"urn:toshokan:opds:{visit.slug}:{listed.slug}",
        title=listed.title,
        updated=atom.timestamp(details.updatedAt if details else None),
        content=content or (details.synopsis if details else listed.title),
        categories=categories(visit, details) if details else [],
        links=[
            Link("subsection", visit.url("series", listed.slug), ACQUISITION),
            *cover_links(visit, listed.cover),
        ],
    )


def stream_link(
    visit: CatalogueVisit, manga_slug: str, chapter_slug: str, count: int, position: Position | None
) -> Link:
    """The PSE stream link, with where the reader is in it: ``pse:lastRead`` counts pages
    from 1 (PSE 1.1) where the store counts from 0, and ``pse:lastReadDate`` (PSE 1.2) says when."""
    pages = visit.url("series", manga_slug, chapter_slug, "pages", template=PAGE_TEMPLATE)
    extra = {f"{{{atom.PSE}}}count": str(count)}
    if position is not None:
        extra[f"{{{atom.PSE}}}lastRead"] = str(position.page + 1)
        read_at = datetime.fromtimestamp(position.updated, UTC)
        extra[f"{{{atom.PSE}}}lastReadDate"] = atom.timestamp(read_at)
    return Link(atom.REL_STREAM, pages, "image/jpeg", extra=extra)


def acquisition_link(download: Download) -> Link:
    extra = {"length": str(download.size)} if download.size is not None else {}
    return Link(atom.REL_ACQUISITION, download.url, download.media_type, "Download", extra=extra)


def first_page_thumbnail(visit: CatalogueVisit, first_page: str | None) -> list[Link]:
    if first_page is None:
        return []
    url = visit.core.images.signed_url(
        visit.caller.base_url, visit.slug, first_page, thumbnail=True
    )
    return [Link(atom.REL_THUMBNAIL, url, "image/jpeg")]


def chapter_entry(
    visit: CatalogueVisit,
    manga: Manga,
    manga_slug: str,
    chapter: Chapter,
    pages: Pages | None,
    download: Download | None,
    position: Position | None,
) -> AtomEntry:
    """A chapter: streamed from here when its page count is known, else through its own feed."""
    if pages is not None and pages.count:
        links = [
            stream_link(visit, manga_slug, chapter.slug, pages.count, position),
            *first_page_thumbnail(visit, pages.first),
        ]
        content = f"{manga.title}, {chapter_title(chapter)}: {pages.count} pages"
    else:
        links = [Link("subsection", visit.url("series", manga_slug, chapter.slug), ACQUISITION)]
        content = f"{manga.title}, {chapter_title(chapter)}"
    if download is not None:
        links.append(acquisition_link(download))
    return AtomEntry(
        id=f"urn:toshokan:opds:{visit.slug}:{manga_slug}:{chapter.slug}",
        title=chapter_title(chapter),
        updated=atom.timestamp(chapter.date),
        issued=atom.timestamp(chapter.date),
        language=chapter.language,
        content=content,
        links=links,
    )
