"""A new file in the local library is a new chapter of the series that folder is; reading it in
KOReader (its sync) clears it from the reader's updates."""

import asyncio
from pathlib import Path

import pytest

from tests.faces.follows.test_api import until
from tests.faces.kosync.koreader import KOReader, book_digest
from tests.helpers.hosts import add_reader, serve_library
from tests.helpers.libraries import DemoLibrary
from tests.sources.local.helpers import cbz
from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio


async def check_now(host: ServedHost, auth: tuple[str, str]) -> None:
    batch = (await host.client.post("/_/follows/checks", json={}, auth=auth)).json()["batch"]

    async def finished() -> bool:
        found = await host.client.get(f"/_/follows/checks/{batch}", auth=auth)
        return found.json()["finished"] is not None

    await until(finished)


async def test_a_new_file_read_in_koreader_leaves_the_updates(
    demo_library: DemoLibrary, tmp_path: Path, database_url: str | None
) -> None:
    library = demo_library(series=2, chapters=2, pages=5)
    async with serve_library(
        library,
        tmp_path / "data",
        cluster={"database": database_url},
        follows={"round": 1},
    ) as host:
        key = await add_reader(host, "mika", "hunter22")
        auth = ("mika", key)
        found = await host.client.post("/local/search", json={"page": 1, "sort": "title"})
        first = found.json()["results"][0]
        slug, title = first["slug"], first["title"]
        followed = await host.client.put(f"/_/follows/series/local/{slug}", auth=auth)
        assert followed.status_code == 201

        async def checked() -> bool:
            found = await host.client.get(f"/_/follows/series/local/{slug}", auth=auth)
            return bool(found.json()["state"] == "ok")

        await until(checked)
        book = cbz(library / title / f"{title} Ch.003.cbz", pages=5)
        await host.source("local").rescan()
        await asyncio.sleep(1.1)  # a series is checked on demand once a round at most
        await check_now(host, auth)
        updates = (await host.client.get("/_/follows/updates", auth=auth)).json()["updates"]
        assert [u["unread"] for u in updates] == [True]

        device = KOReader(host.client, "mika", "hunter22")
        assert (await device.update_progress(book_digest(book), 5, 5)).status_code == 200
        updates = (await host.client.get("/_/follows/updates", auth=auth)).json()["updates"]
        assert [u["unread"] for u in updates] == [False]
        assert (await host.client.get("/_/follows/updates?unread=1", auth=auth)).json()[
            "updates"
        ] == []
