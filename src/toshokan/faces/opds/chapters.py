"""What the face tells about a series' chapters: their titles, and for a page of them their files.

A chapter entry that a PSE reader can open at once needs the chapter's page
count (``pse:count``), and one that a reader can keep offline its file (an
acquisition link). The core answers both for one chapter at a time
(:meth:`~toshokan.core.Core.download`, the page list), so a feed of 50
chapters asks 100 questions. They are asked:

- only of a source that holds its chapters as files here (it offers them for
  download): their page lists are reads of its own index. A remote source's
  page list is an upstream request (MangaDex's at-home endpoint allows a few
  dozen a minute), so its entries lead to a one-entry feed that asks for one
  chapter's count when the reader opens it;
- for the page of chapters shown, all at once;
- once in a while: the answers are remembered briefly per source generation,
  caller and address (a reader comes back to the series feed after each
  chapter), never longer than half a signed link's life.
"""

import asyncio
import hashlib
import time
import weakref
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from toshokan.core import Core
from toshokan.errors import ChapterNotFound, HostError
from toshokan.faces.opds.context import Ctx
from toshokan.models import Chapter
from toshokan.sdk import Download

#: Seconds a chapter's file and page count are remembered (capped at half of ``link_ttl``).
FILES_SECONDS = 120
#: Chapters remembered per host, across series and callers.
FILES_ENTRIES = 4096


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
class ChapterFiles:
    """A chapter's file to download (if any), its page count (0 when they could not be listed)."""

    download: Download | None
    pages: int
    first_page: str | None


_memos: "weakref.WeakKeyDictionary[Core, OrderedDict[Hashable, tuple[float, ChapterFiles]]]" = (
    weakref.WeakKeyDictionary()
)


async def chapter_files(
    ctx: Ctx, manga_slug: str, chapters: Sequence[Chapter]
) -> dict[str, ChapterFiles]:
    """The files and page counts of ``chapters``, by slug; empty for a remote source."""
    if not chapters or not ctx.holds_files:
        return {}
    memo = _memos.setdefault(ctx.core, OrderedDict())
    keep = min(FILES_SECONDS, ctx.core.settings.host.link_ttl // 2)
    scope = (
        ctx.slug,
        ctx.core.cache.generation(ctx.slug),
        manga_slug,
        _credentials(ctx),
        ctx.caller.base_url,
    )
    now = time.monotonic()

    async def one(chapter: Chapter) -> tuple[str, ChapterFiles]:
        key = (*scope, chapter.slug)
        kept = memo.get(key)
        if kept is not None and kept[0] > now:
            return chapter.slug, kept[1]
        found = await _ask(ctx, manga_slug, chapter.slug)
        memo[key] = (time.monotonic() + keep, found)
        while len(memo) > FILES_ENTRIES:
            memo.popitem(last=False)
        return chapter.slug, found

    return dict(await asyncio.gather(*(one(chapter) for chapter in chapters)))


async def _ask(ctx: Ctx, manga_slug: str, chapter_slug: str) -> ChapterFiles:
    # A chapter gone since the list was made simply gets no link.
    try:
        download = await ctx.core.download(ctx.slug, manga_slug, chapter_slug, ctx.caller)
    except HostError:
        download = None
    try:
        urls = (await ctx.core.pages(ctx.slug, manga_slug, chapter_slug, ctx.caller)).value
    except HostError:
        urls = []
    return ChapterFiles(download, len(urls), urls[0] if urls else None)


def _credentials(ctx: Ctx) -> str:
    """Which credentials asked: answers for one reader's are never handed to another's."""
    sent = "\n".join(
        f"{name}:{ctx.caller.headers.get(name, '')}"
        for name in ("authorization", "cookie", "x-api-key")
    )
    return hashlib.sha256(sent.encode()).hexdigest()
