"""A check of many MangaDex series asks one ``/manga?ids[]=`` for their latest uploaded chapters
and reads the feed of those whose latest moved only (and of each, in full, once a day): on
SQLite and on PostgreSQL. What is counted is the fake MangaDex's requests."""

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.sources.mangadex.fake import API, T0, UPLOADS, FakeMangaDex
from toshokan.core.follows.checks import FULL_CHECK_SECONDS
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, serve_host

pytestmark = pytest.mark.anyio

SERIES = 6


@pytest.fixture
def fake() -> FakeMangaDex:
    fake = FakeMangaDex()
    for n in range(SERIES):
        fake.add_many_chapters(fake.add_manga(f"series-{n}", f"Series {n}"), 3)
    return fake


@pytest.fixture
async def host(
    fake: FakeMangaDex, tmp_path: Path, database_url: str | None
) -> AsyncIterator[ServedHost]:
    """Checks only when the test runs them (no rounds), on the database asked for."""
    async with serve_host(
        {"mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS))},
        upstream=fake.transport(),
        data_dir=tmp_path / "data",
        limits={"rate_limit": 0},
        cache={"max_entries": 0},
        follows={"enabled": False},
        cluster={"database": database_url},
    ) as served:
        follows = served.core.follows
        await follows.open()  # a check queues jobs (a kept series' chapters), as a command does
        for manga in fake.manga.values():
            await asyncio.to_thread(
                follows.store.follow, "mika", "mangadex", manga.id, manga.title["en"], "Ongoing"
            )
        yield served


def asked(fake: FakeMangaDex, since: int) -> tuple[list[int], list[str]]:
    """Since request ``since``: how many ids each ``/manga`` list named, and whose feeds."""
    requests = fake.requests[since:]
    lists = [len(r.values("ids[]")) for r in requests if r.path == "/manga"]
    feeds = [r.path.split("/")[2] for r in requests if r.path.endswith("/feed")]
    return lists, feeds


async def cycle(
    host: ServedHost, fake: FakeMangaDex
) -> tuple[list[int], list[str], dict[str, tuple[str, int]]]:
    since = len(fake.requests)
    _, outcomes = await host.core.follows.check_here()
    lists, feeds = asked(fake, since)
    return lists, sorted(feeds), {o.manga: (o.state, o.new) for o in outcomes}


async def test_only_series_whose_latest_chapter_moved_are_read(
    host: ServedHost, fake: FakeMangaDex
) -> None:
    ids = list(fake.manga)
    # The first check of each reads it whole (what exists).
    lists, feeds, outcomes = await cycle(host, fake)
    assert (lists, feeds) == ([SERIES], sorted(ids))
    assert set(outcomes.values()) == {("ok", 0)}

    # Nothing moved: one request for every series.
    lists, feeds, outcomes = await cycle(host, fake)
    assert (lists, feeds) == ([SERIES], [])
    assert set(outcomes.values()) == {("ok", 0)}

    # A new chapter: that series' feed is read, and the chapter found.
    fake.add_chapter(fake.manga[ids[1]], "4", title="New", publish_at=T0 + timedelta(days=9))
    lists, feeds, outcomes = await cycle(host, fake)
    assert (lists, feeds) == ([SERIES], [ids[1]])
    assert outcomes[ids[1]] == ("ok", 1)
    updates = await host.core.follows.updates("mika")
    assert [(u.manga, u.title) for u in updates] == [(ids[1], "Ch. 4 - New")]

    # Read in full a day after it last was, whatever its mark: a chapter removed is seen then.
    removed = next(c for c in fake.chapters.values() if c.manga_id == ids[2])
    del fake.chapters[removed.id]
    with host.core.database.transaction() as cursor:
        cursor.execute(
            "UPDATE followed_series SET full_check = full_check - ? WHERE manga = ?",
            (FULL_CHECK_SECONDS + 1, ids[2]),
        )
    lists, feeds, outcomes = await cycle(host, fake)
    assert (lists, feeds) == ([SERIES], [ids[2]])
    with host.core.database.transaction() as cursor:
        cursor.execute("SELECT removed FROM series_chapters WHERE chapter = ?", (removed.id,))
        assert cursor.fetchone()[0] is not None

    # A series MangaDex no longer lists is read (and found gone), not taken as unchanged.
    del fake.manga[ids[3]]
    lists, feeds, outcomes = await cycle(host, fake)
    assert (lists, feeds) == ([SERIES], [ids[3]])
    assert outcomes[ids[3]] == ("gone", 0)
    assert {m: s for m, s in outcomes.items() if m != ids[3]} == dict.fromkeys(
        [i for i in ids if i != ids[3]], ("ok", 0)
    )
