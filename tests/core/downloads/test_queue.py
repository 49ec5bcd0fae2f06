"""The download queue on both engines: a check finds a chapter, the queue keeps it in the
library once; a reader's filters choose what is kept; the folder's and the upstream's failures
give the promised state, and nothing already kept is touched."""

import asyncio
import io
import zipfile
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.core.downloads.queue import (
    ANYONE,
    cbz_files,
    check_now,
    downloads,
    follow_and_keep,
    keeping_host,
    kept_files,
    pirates,
    read_only,
    settled,
    small_disk,
    until,
)
from tests.sources.mangadex.fake import T0, FakeMangaDex
from tests.sources.mangadex.image_servers import ImageServers
from tests.sources.mangadex.sample import two_series
from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio


@pytest.fixture
def fake() -> FakeMangaDex:
    return two_series()


@pytest.fixture
def servers(fake: FakeMangaDex) -> ImageServers:
    return ImageServers(fake)


@pytest.fixture
def library(tmp_path: Path) -> Path:
    folder = tmp_path / "library"
    folder.mkdir()
    return folder


@pytest.fixture
async def host(
    servers: ImageServers, library: Path, tmp_path: Path, database_url: str | None
) -> AsyncIterator[ServedHost]:
    async with keeping_host(
        servers, library, tmp_path / "data", database_url, attempts=2, retry_after=1
    ) as served:
        yield served


def publish(fake: FakeMangaDex, manga: str, number: str, **attributes: object) -> str:
    chapter = fake.add_chapter(
        fake.manga[manga],
        number,
        title=f"Chapter {number}",
        publish_at=T0 + timedelta(days=30 + float(number)),
        **attributes,
    )
    return chapter.id


async def test_a_new_chapter_found_by_a_check_is_kept_once(
    host: ServedHost, fake: FakeMangaDex, library: Path
) -> None:
    manga = pirates(fake)
    await follow_and_keep(host, manga)
    assert await downloads(host) == []  # what existed when it was kept is not backfilled
    group = next(iter(fake.groups))
    new = publish(fake, manga, "4", groups=[group])
    await check_now(host, manga)
    (done,) = await settled(host, 1)
    assert (done.chapter, done.state, done.pages_done, done.pages) == (new, "done", 3, 3)
    assert done.path is not None and (library / done.path).is_file()
    assert cbz_files(library) == [done.path]
    # The next check finds nothing new: nothing is queued or written again.
    await check_now(host, manga)
    await asyncio.sleep(1.5)
    assert [d.id for d in await downloads(host)] == [done.id]
    assert cbz_files(library) == [done.path]


async def test_filters_choose_languages_groups_one_version_a_number_and_a_backfill(
    host: ServedHost, fake: FakeMangaDex, library: Path
) -> None:
    manga = pirates(fake)
    ours = next(iter(fake.groups))
    theirs = fake.add_group("Other Scans").id
    await follow_and_keep(host, manga, languages=["en"], groups=["Other Scans"], backfill=2)
    # The two newest numbers that existed, oldest first.
    backfilled = await settled(host, 2)
    assert [d.number for d in backfilled] == [2.0, 3.0]
    # Number 4 in two groups and Spanish: one version, the preferred group's; no Spanish.
    publish(fake, manga, "4", groups=[ours])
    preferred = publish(fake, manga, "4", groups=[theirs])
    publish(fake, manga, "5", groups=[ours], language="es")
    await check_now(host, manga)
    rows = await settled(host, 3)
    assert [(d.number, d.chapter) for d in rows if d.number == 4.0] == [(4.0, preferred)]
    assert all(d.language == "en" for d in rows)
    assert len(cbz_files(library)) == 3


async def test_only_unread_skips_what_the_reader_finished(
    host: ServedHost, fake: FakeMangaDex
) -> None:
    from toshokan.core.progress import ChapterRef, Position

    manga = pirates(fake)
    chapters = sorted(
        (c for c in fake.chapters.values() if c.manga_id == manga), key=lambda c: c.chapter or ""
    )
    finished = ChapterRef("mangadex", manga, chapters[-1].id)
    await host.core.progress.arecord(ANYONE, finished, Position(2, 3, True, 1000.0))
    await follow_and_keep(host, manga, backfill=2, only_unread=True)
    rows = await settled(host, 2)
    assert [d.number for d in rows] == [1.0, 2.0]  # the two newest unread: 3 was read


async def test_a_read_only_folder_pauses_the_queue_until_it_is_writable_again(
    host: ServedHost, fake: FakeMangaDex, library: Path
) -> None:
    manga = pirates(fake)
    await follow_and_keep(host, manga, backfill=1)
    (first,) = await settled(host, 1)
    kept_before = kept_files(library)
    with read_only(library):
        publish(fake, manga, "4", groups=[next(iter(fake.groups))])
        await check_now(host, manga)

        async def paused() -> str | None:
            return host.core.downloads.detail()

        detail = await until(paused)
        assert detail.startswith("downloads paused: the keep folder cannot be written")
        listing = await host.core.downloads.listing(None)
        assert listing.queue.paused == "not-writable"
        assert [d.state for d in listing.downloads if d.number == 4.0] == ["queued"]
        health = await host.client.get("/mangadex/health")
        assert detail in health.text
    # Fixed: the queue resumes by itself (a look every 10 s) and keeps the chapter.
    rows = await settled(host, 2)
    assert [d.state for d in rows if d.number == 4.0] == ["done"]
    assert {p: b for p, b in kept_files(library).items() if p == first.path} == kept_before
    assert host.core.downloads.detail() is None


@pytest.mark.parametrize(
    ("status", "reason"), [(500, "upstream-error"), (429, "rate-limited")], ids=["500", "429"]
)
async def test_an_upstream_that_fails_is_retried_then_the_chapter_fails_with_the_reason(
    host: ServedHost,
    fake: FakeMangaDex,
    servers: ImageServers,
    library: Path,
    status: int,
    reason: str,
) -> None:
    manga = pirates(fake)
    await follow_and_keep(host, manga, backfill=1)
    await settled(host, 1)
    before = await asyncio.to_thread(kept_files, library)
    storm = fake.script(
        r"^/at-home/server/", status=status, headers={"Retry-After": "1"}, times=1000
    )
    publish(fake, manga, "4", groups=[next(iter(fake.groups))])
    await check_now(host, manga)
    rows = await settled(host, 1, ("failed",))
    (failed,) = [d for d in rows if d.state == "failed"]
    assert (failed.reason, failed.attempts) == (reason, 2)  # [keep] attempts = 2
    figures = (await host.client.get("/_/metrics")).text
    assert f'toshokan_download_failures_total{{reason="{reason}",source="mangadex"}} 1.0' in figures
    # A storm is not fed: a few requests a try, not a loop.
    assert 1000 - storm.times <= 8
    assert await asyncio.to_thread(kept_files, library) == before
    # Retried once the upstream is back: kept.
    fake.scripts.clear()
    await host.core.downloads.steer(None, failed.id, "retry")
    rows = await settled(host, 2)
    after = await asyncio.to_thread(kept_files, library)
    assert {p: after[p] for p in before} == before and len(after) == 2


async def test_a_corrupt_page_fails_its_chapter_at_once_and_touches_nothing(
    host: ServedHost, fake: FakeMangaDex, servers: ImageServers, library: Path
) -> None:
    manga = pirates(fake)
    await follow_and_keep(host, manga, backfill=1)
    await settled(host, 1)
    before = kept_files(library)
    servers.body = servers.body[: len(servers.body) // 2]
    publish(fake, manga, "4", groups=[next(iter(fake.groups))])
    await check_now(host, manga)
    rows = await settled(host, 1, ("failed",))
    (failed,) = [d for d in rows if d.state == "failed"]
    assert (failed.reason, failed.attempts) == ("bad-image", 1)
    assert kept_files(library) == before
    assert not await asyncio.to_thread(lambda: any((library / ".toshokan-keep").iterdir()))


def fill(folder: Path) -> Path:
    """Write a file into ``folder`` until its disk is full; the file."""
    filler = folder / "filler"
    chunk = b"\0" * 65536
    with filler.open("wb") as out:
        try:
            while True:
                out.write(chunk)
                out.flush()
        except OSError:
            pass
    return filler


async def test_a_full_disk_pauses_the_queue_until_there_is_room_again(
    servers: ImageServers, fake: FakeMangaDex, library: Path, tmp_path: Path
) -> None:
    """A real full disk (a small tmpfs as the library, filled): the chapter that does not fit
    pauses the queue with one line, leaves nothing partial, and is kept whole once there is room."""
    with small_disk(library):
        async with keeping_host(servers, library, tmp_path / "data", None) as host:
            manga = pirates(fake)
            await follow_and_keep(host, manga, backfill=1)
            (first,) = await settled(host, 1)
            before = await asyncio.to_thread(kept_files, library)
            filler = await asyncio.to_thread(fill, library)
            fourth = publish(fake, manga, "4", groups=[next(iter(fake.groups))])
            await check_now(host, manga)

            async def paused() -> str | None:
                return host.core.downloads.detail()

            detail = await until(paused)
            assert detail.startswith("downloads paused: the keep folder is full")
            assert "No space left on device" in detail
            listing = (await host.client.get("/_/downloads")).json()
            assert listing["queue"]["paused"] == "no-space"
            assert detail == f"downloads paused: {listing['queue']['message']}"
            assert [d["state"] for d in listing["downloads"] if d["number"] == 4.0] == ["queued"]
            assert detail in (await host.client.get("/mangadex/health")).text
            # Nothing partial where the library looks, nothing left aside, nothing kept touched.
            assert await asyncio.to_thread(kept_files, library) == before
            assert not await asyncio.to_thread(files_aside, library)

            await asyncio.to_thread(filler.unlink)  # the room is made
            rows = await settled(host, 2, seconds=60)  # the bound: within a minute
            assert [d.state for d in rows] == ["done", "done"]
            assert host.core.downloads.detail() is None
            after = await asyncio.to_thread(kept_files, library)
            assert {p: after[p] for p in before} == before and first.path in after
            (new,) = (d for d in rows if d.number == 4.0)
            assert new.path is not None
            pages = pages_of(after[new.path])
            assert len(pages) == fake.chapters[fourth].pages
            assert all(page == servers.body for page in pages)
            assert not await asyncio.to_thread(files_aside, library)


def files_aside(library: Path) -> list[Path]:
    """Drafts or other leftovers in the keep's folder aside (``.toshokan-keep``)."""
    return [p for p in (library / ".toshokan-keep").rglob("*") if p.is_file()]


def pages_of(cbz: bytes) -> list[bytes]:
    """The images of a kept chapter, in order (the CBZ must open)."""
    with zipfile.ZipFile(io.BytesIO(cbz)) as archive:
        assert archive.testzip() is None
        names = sorted(n for n in archive.namelist() if not n.endswith(".xml"))
        return [archive.read(name) for name in names]
