"""What the face tells about a series' chapters: titles, and for a page of them files and counts.

A chapter entry that a PSE reader can open at once needs the chapter's page
count (``pse:count``), and one that a reader can keep offline its file (an
acquisition link). The core answers both for one chapter at a time
(:meth:`~toshokan.core.Visit.download` and
:meth:`~toshokan.core.Visit.page_list`), and remembers them a while, so a feed of 50 chapters asks 100
questions the first time and few after (the OPDS 2.0 feed, whose manifests list
the pages, asks only for the files). They are asked:

- only of a source that holds its chapters as files here (it offers them for
  download): their page lists are reads of its own index. A remote source's
  page list is an upstream request (MangaDex's at-home endpoint allows a few
  dozen a minute), so its entries carry the count the source listed with its
  chapters, or lead to a one-entry feed that asks for one chapter's count when
  the reader opens it;
- for the page of chapters shown, all at once.
"""

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from toshokan.core import Download
from toshokan.errors import ChapterNotFound, HostError
from toshokan.faces.opds.context import CHAPTERS_PER_PAGE, CatalogueVisit
from toshokan.models import Chapter, Manga


@dataclass(frozen=True)
class SeriesPage:
    """A series' details and the page of its chapters (newest first) a feed shows."""

    manga: Manga
    chapters: list[Chapter]
    page: int
    #: Either answer was for this caller only.
    private: bool

    @property
    def total(self) -> int:
        return len(self.chapters)

    @property
    def start(self) -> int:
        """The index of this page's first chapter, from 0."""
        return (self.page - 1) * CHAPTERS_PER_PAGE

    @property
    def shown(self) -> list[Chapter]:
        return self.chapters[self.start : self.start + CHAPTERS_PER_PAGE]

    @property
    def more(self) -> bool:
        return self.start + CHAPTERS_PER_PAGE < self.total


async def series_page(visit: CatalogueVisit, manga_slug: str, page: int) -> SeriesPage:
    """Details and chapters of ``manga_slug``, asked of the core at once."""
    details, listed = await asyncio.gather(
        visit.source_visit.manga(manga_slug),
        visit.source_visit.chapters(manga_slug),
    )
    private = details.private or listed.private or visit.private
    return SeriesPage(details.value, listed.value, page, private)


def chapter_title(chapter: Chapter) -> str:
    """A title that tells versions apart: number, title, group and language."""
    return numbered_title(chapter.number, chapter.title, chapter.scanlator, chapter.language)


def numbered_title(number: float, title: str, scanlator: str, language: str) -> str:
    """:func:`chapter_title` of a chapter known by its fields (one a check found)."""
    shown = f"{number:g}"
    title = title.strip()
    head = f"Ch. {shown}"
    if title and title != "No Title" and title.lower() not in (f"chapter {shown}", f"ch. {shown}"):
        head = f"{head}: {title}"
    group = scanlator.strip() or "Unknown Scanlator"
    return f"{head} [{group}, {language}]"


async def listed_chapter(visit: CatalogueVisit, manga_slug: str, chapter_slug: str) -> Chapter:
    """The chapter ``chapter_slug`` as the series' chapter list has it (cached by the core)."""
    listed = await visit.source_visit.chapters(manga_slug)
    chapter = next((c for c in listed.value if c.slug == chapter_slug), None)
    if chapter is None:
        raise ChapterNotFound()
    return chapter


@dataclass(frozen=True)
class Pages:
    """A chapter's page count (0 when its pages could not be listed) and its first page."""

    count: int
    first: str | None


async def downloads(
    visit: CatalogueVisit, manga_slug: str, chapters: Sequence[Chapter]
) -> dict[str, Download]:
    """The files of ``chapters`` to download, by slug; chapters without one are left out."""
    if not visit.holds_files:
        return {}

    async def ask(chapter: Chapter) -> Download | None:
        try:
            return await visit.source_visit.download(manga_slug, chapter.slug)
        except HostError:  # gone since the list was made: the entry simply has no link
            return None

    found = await asyncio.gather(*(ask(chapter) for chapter in chapters))
    return {c.slug: d for c, d in zip(chapters, found, strict=True) if d is not None}


async def page_counts(
    visit: CatalogueVisit, manga_slug: str, chapters: Sequence[Chapter]
) -> dict[str, Pages]:
    """The page counts of ``chapters``, by slug: asked of a source that holds files, else
    those the source listed with its chapters (MangaDex's feed gives them)."""
    if not visit.holds_files:
        return {c.slug: Pages(c.pages, None) for c in chapters if c.pages}

    async def ask(chapter: Chapter) -> Pages:
        try:
            urls = await visit.source_visit.page_list(manga_slug, chapter.slug)
        except HostError:
            return Pages(0, None)
        return Pages(len(urls), urls[0] if urls else None)

    found = await asyncio.gather(*(ask(chapter) for chapter in chapters))
    return dict(zip((c.slug for c in chapters), found, strict=True))
