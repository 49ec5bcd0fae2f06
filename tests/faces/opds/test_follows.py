"""A reader's follows in both catalogues: the fake MangaDex publishes a chapter, a check finds it,
and an OPDS reader walks from the root to Updates and streams it to its last page image (OPDS
1.2 with PSE, and OPDS 2.0 through the chapter's DiViNa manifest); the chapter read, it leaves
Updates."""

import asyncio
import io
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.faces.follows.test_api import until
from tests.helpers.hosts import add_reader
from tests.helpers.libraries import DemoLibrary
from tests.sources.local.helpers import cbz
from tests.sources.mangadex.fake import API, T0, UPLOADS, Chapter, FakeMangaDex
from tests.sources.mangadex.image_servers import ImageServers
from toshokan.faces.opds.atom import PSE
from toshokan.sources.local import LocalLibrary
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, serve_host

from .opds2_schema import assert_feed, assert_manifest
from .reader import ACQUISITION, NAVIGATION, NS, STREAM, Reader, entry_titled, href, link
from .servers import SECRET
from .test_opds2 import DIVINA, get_json, rel

pytestmark = pytest.mark.anyio

READER, PASSWORD = "mika", "hunter22 at sea"


@pytest.fixture
async def host(
    image_servers: ImageServers, tmp_path: Path, database_url: str | None
) -> AsyncIterator[ServedHost]:
    """MangaDex with its image servers, one reader, follows checked on rounds a second apart;
    follows and progress in SQLite or PostgreSQL."""
    async with serve_host(
        {"mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS))},
        upstream=image_servers,
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0},
        follows={"round": 1},
        cluster={"database": database_url},
    ) as served:
        await add_reader(served, READER, PASSWORD)
        yield served


def pirates(fake: FakeMangaDex) -> str:
    return next(m.id for m in fake.manga.values() if m.title["en"] == "Pirate Voyage")


async def published_and_found(host: ServedHost, fake: FakeMangaDex) -> Chapter:
    """The reader follows Pirate Voyage; MangaDex publishes chapter 4; a check finds it."""
    auth = (READER, PASSWORD)
    manga = pirates(fake)
    assert (await host.client.put(f"/_/follows/series/mangadex/{manga}", auth=auth)).is_success

    async def checked() -> bool:
        found = await host.client.get(f"/_/follows/series/mangadex/{manga}", auth=auth)
        return bool(found.json()["state"] == "ok")

    await until(checked)
    await asyncio.sleep(1.1)  # a series is checked on demand once a round at most
    chapter = fake.add_chapter(
        fake.manga[manga], "4", title="Landfall", publish_at=T0 + timedelta(days=30), pages=5
    )
    batch = (await host.client.post("/_/follows/checks", json={}, auth=auth)).json()["batch"]

    async def finished() -> bool:
        status = await host.client.get(f"/_/follows/checks/{batch}", auth=auth)
        return status.json()["finished"] is not None

    await until(finished)
    return chapter


async def unread(host: ServedHost) -> list[Any]:
    answer = await host.client.get("/_/follows/updates?unread=1", auth=(READER, PASSWORD))
    updates: list[Any] = answer.json()["updates"]
    return updates


async def test_atom_root_to_updates_to_the_last_page(host: ServedHost, fake: FakeMangaDex) -> None:
    chapter = await published_and_found(host, fake)
    reader = Reader(host.client, auth=(READER, PASSWORD))
    root = await reader.feed("/_/opds")
    updates_url = href(entry_titled(root, "Updates"), "subsection", ACQUISITION)
    updates = await reader.feed(updates_url)
    entries = updates.findall("a:entry", NS)
    assert [e.findtext("a:title", namespaces=NS) for e in entries] == [
        "Pirate Voyage: Ch. 4: Ch. 4 - Landfall [Unknown Scanlator, en]"
    ]
    stream = link(entries[0], STREAM)
    assert stream is not None and stream.get(f"{{{PSE}}}count") == "5"
    assert chapter.id in (stream.get("href") or "")
    pages = await reader.read_chapter(entries[0])  # every page, the last one included
    assert len(pages) == 5
    assert Image.open(io.BytesIO(pages[-1])).format == "JPEG"

    # Streamed to its last page, the chapter is read: on every face.
    assert await unread(host) == []
    assert (await reader.feed(updates_url)).findall("a:entry", NS) == []

    following = await reader.feed(href(entry_titled(root, "Following"), "subsection", NAVIGATION))
    series_url = href(entry_titled(following, "Pirate Voyage"), "subsection", ACQUISITION)
    series = await reader.feed(series_url)
    newest = series.findall("a:entry", NS)[0]
    assert chapter.id in href(newest, STREAM)


async def test_opds2_root_to_updates_to_the_last_page(host: ServedHost, fake: FakeMangaDex) -> None:
    chapter = await published_and_found(host, fake)
    root = await get_json(host.client, "/_/opds/v2", auth=(READER, PASSWORD))
    assert_feed(root)
    updates_url = next(n["href"] for n in root["navigation"] if n["title"] == "Updates")
    updates = await get_json(host.client, updates_url, auth=(READER, PASSWORD))
    assert_feed(updates)
    [publication] = updates["publications"]
    assert publication["metadata"]["title"].startswith("Pirate Voyage: Ch. 4")
    assert publication["metadata"]["identifier"].endswith(chapter.id)
    manifest_url = next(k["href"] for k in publication["links"] if k["type"] == DIVINA)
    manifest = await get_json(host.client, manifest_url, DIVINA, auth=(READER, PASSWORD))
    assert_manifest(manifest)
    assert len(manifest["readingOrder"]) == 5
    for item in manifest["readingOrder"]:  # a DiViNa reader fetches them in order
        answer = await host.client.get(item["href"], auth=(READER, PASSWORD))
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "image/jpeg"
    assert Image.open(io.BytesIO(answer.content)).size[0] > 0

    assert await unread(host) == []
    emptied = await get_json(host.client, updates_url, auth=(READER, PASSWORD))
    assert_feed(emptied)
    assert "publications" not in emptied

    following_url = next(n["href"] for n in root["navigation"] if n["title"] == "Following")
    following = await get_json(host.client, following_url, auth=(READER, PASSWORD))
    assert_feed(following)
    assert [n["title"] for n in following["navigation"]] == ["Pirate Voyage"]
    series = await get_json(
        host.client, following["navigation"][0]["href"], auth=(READER, PASSWORD)
    )
    assert series["publications"][0]["metadata"]["identifier"].endswith(chapter.id)


async def test_a_partly_read_chapter_stays_with_its_place(
    host: ServedHost, fake: FakeMangaDex
) -> None:
    """Two pages streamed of five: still unread, and the stream says where the reader is."""
    await published_and_found(host, fake)
    reader = Reader(host.client, auth=(READER, PASSWORD))
    updates = await reader.feed("/_/opds/_updates")
    template = href(updates.findall("a:entry", NS)[0], STREAM)
    for number in (0, 1):
        url = template.replace("{pageNumber}", str(number)).replace("{maxWidth}", "")
        assert (await reader.get(url)).status_code == 200
    again = (await reader.feed("/_/opds/_updates")).findall("a:entry", NS)
    stream = link(again[0], STREAM)
    assert stream is not None and stream.get(f"{{{PSE}}}lastRead") == "2"
    v2 = await get_json(host.client, "/_/opds/v2/_updates", auth=(READER, PASSWORD))
    assert len(v2["publications"]) == 1
    assert rel(v2, "self") == "http://testserver/_/opds/v2/_updates?page=1"


async def test_the_follows_feeds_are_the_readers_own(host: ServedHost) -> None:
    """Without a reader's name the feeds are refused as the catalogue refuses; a page past the
    end is empty, and a bad page number is refused."""
    for path in ("/_/opds/_updates", "/_/opds/_following", "/_/opds/v2/_updates"):
        answer = await host.client.get(path)
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"].startswith("Basic")
    reader = Reader(host.client, auth=(READER, PASSWORD))
    assert (await reader.feed("/_/opds/_following")).findall("a:entry", NS) == []
    assert (await reader.feed("/_/opds/_updates?page=3")).findall("a:entry", NS) == []
    bad = await host.client.get("/_/opds/_updates?page=zero", auth=(READER, PASSWORD))
    assert bad.status_code == 400
    empty = await get_json(host.client, "/_/opds/v2/_following", auth=(READER, PASSWORD))
    assert_feed(empty)


async def test_a_new_file_of_a_library_open_to_readers_streams_and_downloads(
    tmp_path: Path, demo_library: DemoLibrary
) -> None:
    """The library accepts the host's readers: its new chapter in Updates streams with the
    reader's own Basic credentials, and carries its file to download."""
    library = demo_library(series=1, chapters=2, pages=4)
    source = (LocalLibrary, {"root": library, "watch": False, "auth": "readers"})
    async with serve_host(
        {"local": source},
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0},
        follows={"round": 1},
    ) as host:
        await add_reader(host, READER, PASSWORD)
        auth = (READER, PASSWORD)
        [series] = (
            await host.client.post("/local/search", json={"page": 1, "sort": "title"}, auth=auth)
        ).json()["results"]
        slug = series["slug"]
        assert (await host.client.put(f"/_/follows/series/local/{slug}", auth=auth)).is_success

        async def checked() -> bool:
            found = await host.client.get(f"/_/follows/series/local/{slug}", auth=auth)
            return bool(found.json()["state"] == "ok")

        await until(checked)
        cbz(library / series["title"] / f"{series['title']} Ch.003.cbz", pages=6)
        await host.source("local").rescan()
        await asyncio.sleep(1.1)
        batch = (await host.client.post("/_/follows/checks", json={}, auth=auth)).json()["batch"]

        async def finished() -> bool:
            status = await host.client.get(f"/_/follows/checks/{batch}", auth=auth)
            return status.json()["finished"] is not None

        await until(finished)
        reader = Reader(host.client, auth=auth)
        root = await reader.feed("/_/opds")
        updates = await reader.feed(href(entry_titled(root, "Updates"), "subsection", ACQUISITION))
        [entry] = updates.findall("a:entry", NS)
        assert link(entry, "http://opds-spec.org/acquisition") is not None
        assert len(await reader.read_chapter(entry)) == 6
        assert await unread(host) == []
        anonymous = await host.client.get(href(updates, "self"))
        assert anonymous.status_code == 401
