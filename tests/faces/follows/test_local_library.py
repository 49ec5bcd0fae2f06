"""A new file in the local library is a new chapter of the series that folder is; reading it in
KOReader (its sync) clears it from the reader's updates, on every face that lists them: the
follows API (which the web reader draws), and both OPDS catalogues' Updates."""

import asyncio
from pathlib import Path

import pytest

from tests.faces.follows.test_api import until
from tests.faces.kosync.koreader import KOReader, book_digest
from tests.faces.opds.reader import ACQUISITION, NS, Reader, entry_titled, href
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
        assert await in_opds(host, auth) == ([updates[0]["chapter"]], [updates[0]["chapter"]])

        device = KOReader(host.client, "mika", "hunter22")
        assert (await device.update_progress(book_digest(book), 4, 5)).status_code == 200
        # A page short of the end: still new, everywhere.
        assert (await host.client.get("/_/follows/updates?unread=1", auth=auth)).json()["updates"]
        assert await in_opds(host, auth) == ([updates[0]["chapter"]], [updates[0]["chapter"]])
        assert (await device.update_progress(book_digest(book), 5, 5)).status_code == 200
        updates = (await host.client.get("/_/follows/updates", auth=auth)).json()["updates"]
        assert [u["unread"] for u in updates] == [False]
        assert (await host.client.get("/_/follows/updates?unread=1", auth=auth)).json()[
            "updates"
        ] == []
        assert await in_opds(host, auth) == ([], [])


async def in_opds(host: ServedHost, auth: tuple[str, str]) -> tuple[list[str], list[str]]:
    """The chapters in the reader's Updates of the Atom catalogue and of OPDS 2.0, reached from
    their roots as a reader reaches them."""
    reader = Reader(host.client, auth=auth)
    root = await reader.feed("/_/opds")
    atom = await reader.feed(href(entry_titled(root, "Updates"), "subsection", ACQUISITION))
    ids = [e.findtext("a:id", namespaces=NS) or "" for e in atom.findall("a:entry", NS)]
    v2_root = (await host.client.get("/_/opds/v2", auth=auth)).json()
    url = next(n["href"] for n in v2_root["navigation"] if n["title"] == "Updates")
    v2 = (await host.client.get(url, auth=auth)).json()
    found = [p["metadata"]["identifier"] for p in v2.get("publications", [])]
    return [i.rsplit(":", 1)[1] for i in ids], [i.rsplit(":", 1)[1] for i in found]
