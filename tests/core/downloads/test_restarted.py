"""A host restarted after it stopped mid-chapter: on the embedded engine (one process works
the queue) the chapter its previous life claimed is kept at once, its claim released; in the
cluster a claim is another replica's until it lapses, so it is left as it is."""

import asyncio
import time
from pathlib import Path

import pytest

from tests.core.downloads.queue import (
    cbz_files,
    downloads,
    follow_and_keep,
    keeping_host,
    pirates,
    settled,
)
from tests.sources.mangadex.image_servers import ImageServers
from tests.sources.mangadex.sample import two_series
from toshokan.core.database import Database

pytestmark = pytest.mark.anyio

#: The claim a process killed mid-chapter left: good for an hour, so only a release frees it.
LEFT = "a-process-killed-mid-chapter.0123"


async def test_a_restarted_host_keeps_the_chapter_its_previous_life_claimed(
    tmp_path: Path, database_url: str | None
) -> None:
    fake = two_series()
    servers = ImageServers(fake)
    library = tmp_path / "library"
    library.mkdir()
    data = tmp_path / "data"
    async with keeping_host(servers, library, data, database_url) as host:
        await host.core.downloads.pause(None)  # so nothing runs in this life
        await follow_and_keep(host, pirates(fake), backfill=1)
        (row,) = await downloads(host)

        def claimed_then_killed() -> None:
            with host.core.database.transaction() as cursor:
                cursor.execute(
                    "UPDATE downloads SET state = 'running', lease = ?, lease_until = ? "
                    "WHERE id = ?",
                    (LEFT, time.time() + 3600, row.id),
                )

        await asyncio.to_thread(claimed_then_killed)

    async with keeping_host(servers, library, data, database_url) as again:
        queue = again.core.downloads
        await queue.resume(None)
        if database_url is None:
            (done,) = await settled(again, 1)
            assert done.id == row.id and done.pages_done == done.pages == 3
            assert cbz_files(library) == [done.path]
        else:
            await queue.runner.work()
            (still,) = await downloads(again)
            assert still.state == "running"
            lease = await asyncio.to_thread(_lease, again.core.database, row.id)
            assert lease == LEFT
            assert cbz_files(library) == []


def _lease(database: Database, download: str) -> str:
    with database.transaction() as cursor:
        cursor.execute("SELECT lease FROM downloads WHERE id = ?", (download,))
        return str(cursor.fetchone()[0])
