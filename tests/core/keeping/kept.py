"""What the keeping tests share: waiting for the library to see a kept file, and the fake's
series with chapters."""

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from tests.sources.mangadex.fake import FakeMangaDex
from toshokan.core.answers import Caller
from toshokan.core.keeping import Kept, Tie
from toshokan.models import Chapter, Manga
from toshokan.testing import ServedHost

T = TypeVar("T")
BASE = "http://testserver"
#: Seconds a kept file may take to be served by the library (its watcher, then a rescan).
SEEN_WITHIN = 10.0


async def until(check: Callable[[], Awaitable[T | None]], seconds: float = SEEN_WITHIN) -> T:
    deadline = time.monotonic() + seconds
    while True:
        found = await check()
        if found:
            return found
        assert time.monotonic() < deadline, "not seen in time"
        await asyncio.sleep(0.1)


def pirates(fake: FakeMangaDex) -> tuple[str, list[str]]:
    """The fake's series with chapters (its slug) and its chapters' slugs, in order."""
    manga = next(m for m in fake.manga.values() if m.title["en"] == "Pirate Voyage")
    chapters = [c.id for c in fake.chapters.values() if c.manga_id == manga.id]
    return manga.id, chapters


async def upstream(host: ServedHost, manga: str) -> tuple[Manga, list[Chapter]]:
    visit = await host.core.visit("mangadex", Caller({}, BASE))
    return (await visit.manga(manga)).value, (await visit.chapters(manga)).value


async def settled(host: ServedHost, kept: Kept) -> Tie:
    """The tie once the library indexed the file (its watcher saw it)."""

    async def resolved() -> Tie | None:
        tie = await asyncio.to_thread(
            host.core.keeper.ties.of_chapter, *kept.tie.original.__dict__.values()
        )
        return tie if tie is not None and tie.copy is not None else None

    return await until(resolved)
