"""What the face tells about a series' chapters: titles, and for a page of them files and counts.

A chapter entry that a PSE reader can open at once needs the chapter's page
count (``pse:count``), and one that a reader can keep offline its file (an
acquisition link). The core answers both for one chapter at a time
(:meth:`~toshokan.core.Core.download`, the page list), so a feed of 50
chapters asks 100 questions (the OPDS 2.0 feed, whose manifests list the
pages, asks only for the files). They are asked:

- only of a source that holds its chapters as files here (it offers them for
  download): their page lists are reads of its own index. A remote source's
  page list is an upstream request (MangaDex's at-home endpoint allows a few
  dozen a minute), so its entries lead to a one-entry feed that asks for one
  chapter's count when the reader opens it;
- for the page of chapters shown, all at once;
- once in a while: the answers are remembered per source generation (a
  library that changes is asked again at once), caller and address, for half
  a signed link's life at most, so the links handed out stay valid a good
  while and a reader coming back to the series after reading a chapter pays
  nothing.
"""

import asyncio
import hashlib
import time
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from toshokan.core import Core
from toshokan.errors import ChapterNotFound, HostError
from toshokan.faces.opds.context import CHAPTERS_PER_PAGE, Ctx
from toshokan.models import Chapter, Manga
from toshokan.sdk import Download

T = TypeVar("T")

#: Seconds a chapter's file and page count are remembered (capped at half of ``link_ttl``).
REMEMBER_SECONDS = 1800
#: Answers remembered per host, across series and callers.
REMEMBER_ENTRIES = 8192


@dataclass(frozen=True)
class SeriesPage:
    """A series' details and the page of its chapters (newest first) a feed shows."""

    manga: Manga
    chapters: list[Chapter]
    page: int
    #: Either answer was for this caller only.
    private: bool

    @property
    def start(self) -> int:
        return (self.page - 1) * CHAPTERS_PER_PAGE

    @property
    def shown(self) -> list[Chapter]:
        return self.chapters[self.start : self.start + CHAPTERS_PER_PAGE]

    @property
    def more(self) -> bool:
        return self.start + CHAPTERS_PER_PAGE < len(self.chapters)


async def series_page(ctx: Ctx, manga_slug: str, page: int) -> SeriesPage:
    """Details and chapters of ``manga_slug``, asked of the core at once."""
    details, listed = await asyncio.gather(
        ctx.core.manga(ctx.slug, manga_slug, ctx.caller),
        ctx.core.chapters(ctx.slug, manga_slug, ctx.caller),
    )
    private = details.private or listed.private or ctx.private
    return SeriesPage(details.value, listed.value, page, private)


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


async def listed_chapter(ctx: Ctx, manga_slug: str, chapter_slug: str) -> Chapter:
    """The chapter ``chapter_slug`` as the series' chapter list has it (cached by the core)."""
    listed = await ctx.core.chapters(ctx.slug, manga_slug, ctx.caller)
    chapter = next((c for c in listed.value if c.slug == chapter_slug), None)
    if chapter is None:
        raise ChapterNotFound()
    return chapter


@dataclass(frozen=True)
class Pages:
    """A chapter's page count (0 when its pages could not be listed) and its first page."""

    count: int
    first: str | None


_memos: "weakref.WeakKeyDictionary[Core, OrderedDict[Hashable, tuple[float, Any]]]" = (
    weakref.WeakKeyDictionary()
)


async def downloads(ctx: Ctx, manga_slug: str, chapters: Sequence[Chapter]) -> dict[str, Download]:
    """The files of ``chapters`` to download, by slug; chapters without one are left out."""

    async def ask(chapter_slug: str) -> Download | None:
        try:
            return await ctx.core.download(ctx.slug, manga_slug, chapter_slug, ctx.caller)
        except HostError:  # gone since the list was made: the entry simply has no link
            return None

    found = await _remembered(ctx, "download", manga_slug, chapters, ask)
    return {slug: download for slug, download in found.items() if download is not None}


async def page_counts(ctx: Ctx, manga_slug: str, chapters: Sequence[Chapter]) -> dict[str, Pages]:
    """The page counts of ``chapters``, by slug: asked of a source that holds files, else
    those the source listed with its chapters (MangaDex's feed gives them)."""
    if not ctx.holds_files:
        return {c.slug: Pages(c.pages, None) for c in chapters if c.pages}

    async def ask(chapter_slug: str) -> Pages:
        try:
            answer = await ctx.core.pages(ctx.slug, manga_slug, chapter_slug, ctx.caller)
        except HostError:
            return Pages(0, None)
        return Pages(len(answer.value), answer.value[0] if answer.value else None)

    return await _remembered(ctx, "pages", manga_slug, chapters, ask)


async def _remembered(
    ctx: Ctx,
    kind: str,
    manga_slug: str,
    chapters: Sequence[Chapter],
    ask: Callable[[str], Awaitable[T]],
) -> dict[str, T]:
    """``ask`` about each chapter at once, unless remembered; nothing for a remote source."""
    if not chapters or not ctx.holds_files:
        return {}
    memo = _memos.setdefault(ctx.core, OrderedDict())
    keep = min(REMEMBER_SECONDS, ctx.core.settings.host.link_ttl // 2)
    scope = (
        kind,
        ctx.slug,
        ctx.core.cache.generation(ctx.slug),
        manga_slug,
        _credentials(ctx),
        ctx.caller.base_url,
    )
    now = time.monotonic()

    async def one(chapter_slug: str) -> tuple[str, T]:
        key = (*scope, chapter_slug)
        kept = memo.get(key)
        if kept is not None and kept[0] > now:
            found: T = kept[1]
            return chapter_slug, found
        found = await ask(chapter_slug)
        memo[key] = (time.monotonic() + keep, found)
        while len(memo) > REMEMBER_ENTRIES:
            memo.popitem(last=False)
        return chapter_slug, found

    return dict(await asyncio.gather(*(one(chapter.slug) for chapter in chapters)))


def _credentials(ctx: Ctx) -> str:
    """Which credentials asked: answers for one reader's are never handed to another's."""
    sent = "\n".join(
        f"{name}:{ctx.caller.headers.get(name, '')}"
        for name in ("authorization", "cookie", "x-api-key")
    )
    return hashlib.sha256(sent.encode()).hexdigest()
