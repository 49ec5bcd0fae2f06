"""Acquisition links: a reader walks the catalogue and downloads each chapter's archive."""

import io
import zipfile
from collections.abc import AsyncIterator
from email.message import Message
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

import pytest
from PIL import Image

from toshokan.faces.opds.atom import PSE
from toshokan.sources.local import LocalLibrary, LocalSettings
from toshokan.testing import ServedHost, serve_host

from . import nypl
from .opds2_schema import assert_feed
from .reader import ACQUISITION, NAVIGATION, NS, STREAM, Reader, entry_titled, href, link
from .servers import SECRET
from .test_auth import GOOD
from .test_opds2 import get_json

pytestmark = pytest.mark.anyio

REL_ACQUISITION = "http://opds-spec.org/acquisition"
CBZ = "application/vnd.comicbook+zip"


def filename_of(disposition: str) -> str:
    message = Message()
    message["content-disposition"] = disposition
    name = message.get_filename()
    assert name
    return name


def file_named(library: Path, name: str) -> bytes:
    """The bytes of the library's file called ``name`` (names hold ``[]``: no glob)."""
    found = [path for path in library.rglob("*") if path.name == name]
    assert len(found) == 1, name
    return found[0].read_bytes()


def path_named(library: Path, name: str) -> Path:
    return next(path for path in library.rglob("*") if path.name == name)


def archives_in(library: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in library.rglob("*.cbz")}


@pytest.fixture
async def mixed_host(library: Path, tmp_path: Path) -> AsyncIterator[ServedHost]:
    """The library, plus a series kept as a folder of images (nothing to download)."""
    folder = library / "Paper Cranes" / "Chapter 01"
    folder.mkdir(parents=True)
    for n in (1, 2):
        Image.new("RGB", (40, 60), (20, 90, 160)).save(folder / f"{n}.jpg", "JPEG")
    async with serve_host(
        {"local": (LocalLibrary, LocalSettings(root=library, watch=False))},
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0},
    ) as served:
        yield served


async def series_feeds(reader: Reader, source_title: str) -> list[Element]:
    root = await reader.feed("/_/opds")
    source = await reader.feed(href(entry_titled(root, source_title), "subsection", NAVIGATION))
    everything = href(entry_titled(source, "All titles"), "subsection", NAVIGATION)
    return [
        await reader.feed(href(series, "subsection", ACQUISITION))
        for series in await reader.every_entry(everything)
    ]


async def download(reader: Reader, url: str) -> tuple[str, bytes, Any]:
    answer = await reader.get(url)
    assert answer.status_code == 200, (url, answer.text[:200])
    return filename_of(answer.headers["content-disposition"]), answer.content, answer.headers


async def test_every_chapter_downloads(mixed_host: ServedHost, library: Path) -> None:
    """Every archive byte for byte; the folder of images as a CBZ of its pages, in order."""
    reader = Reader(mixed_host.client)
    downloaded: dict[str, bytes] = {}
    for feed in await series_feeds(reader, "Local Library"):
        for chapter in feed.findall("a:entry", NS):
            offered = link(chapter, REL_ACQUISITION)
            assert offered is not None, chapter.findtext("a:title", namespaces=NS)
            assert offered.get("type") == CBZ
            name, body, headers = await download(reader, offered.get("href") or "")
            assert headers["content-type"] == CBZ
            assert headers["content-length"] == str(len(body))
            if offered.get("length") is not None:  # Atom's link length, in bytes
                assert offered.get("length") == str(len(body))
            downloaded[name] = body
    archives = archives_in(library)
    assert len(archives) == 8
    folder = downloaded.pop("Chapter 01.cbz")
    assert downloaded == archives
    pages = sorted((library / "Paper Cranes" / "Chapter 01").iterdir())
    with zipfile.ZipFile(io.BytesIO(folder)) as archive:
        assert archive.testzip() is None
        members = archive.infolist()
        assert [m.filename for m in members] == ["1.jpg", "2.jpg"]  # no ComicInfo.xml here
        assert {m.compress_type for m in members} == {zipfile.ZIP_STORED}
        assert [archive.read(m) for m in members] == [page.read_bytes() for page in pages]


async def test_a_folder_downloads_as_the_same_bytes_every_time(mixed_host: ServedHost) -> None:
    reader = Reader(mixed_host.client)
    feeds = await series_feeds(reader, "Local Library")
    (entry,) = [
        e
        for feed in feeds
        if feed.findtext("a:title", namespaces=NS) == "Paper Cranes"
        for e in feed.findall("a:entry", NS)
    ]
    url = href(entry, REL_ACQUISITION, CBZ)
    first, again = await reader.get(url), await reader.get(url)
    assert first.content == again.content and len(first.content) > 0


async def test_a_listed_chapter_offers_the_archive_beside_the_page_stream(
    local_host: ServedHost, library: Path
) -> None:
    reader = Reader(local_host.client)
    feeds = await series_feeds(reader, "Local Library")
    entry = feeds[0].findall("a:entry", NS)[0]
    assert link(entry, STREAM) is not None
    name, body, _ = await download(reader, href(entry, REL_ACQUISITION, CBZ))
    assert body == file_named(library, name)
    assert len(await reader.read_chapter(entry)) == 3


async def test_a_changed_chapter_shows_in_the_series_feed_at_once(
    local_host: ServedHost, library: Path
) -> None:
    """Files and page counts are remembered a while, but never past a change of the library."""
    reader = Reader(local_host.client)
    feed = (await series_feeds(reader, "Local Library"))[0]
    entry = feed.findall("a:entry", NS)[0]
    stream = link(entry, STREAM)
    assert stream is not None and stream.get(f"{{{PSE}}}count") == "3"
    assert len(await reader.read_chapter(entry)) == 3  # its page list is remembered now
    name, _, _ = await download(reader, href(entry, REL_ACQUISITION, CBZ))
    path = path_named(library, name)
    with zipfile.ZipFile(path, "w") as archive:  # the chapter, re-released with five pages
        for n in range(1, 6):
            page = io.BytesIO()
            Image.new("RGB", (40, 60), (n * 40, 90, 160)).save(page, "JPEG")
            archive.writestr(f"{n:03}.jpg", page.getvalue())
    await local_host.source("local").rescan()
    again = await reader.feed(href(feed, "self"))
    changed = next(
        e
        for e in again.findall("a:entry", NS)
        if e.findtext("a:id", namespaces=NS) == entry.findtext("a:id", namespaces=NS)
    )
    stream = link(changed, STREAM)
    assert stream is not None and stream.get(f"{{{PSE}}}count") == "5"
    offered = link(changed, REL_ACQUISITION)
    assert offered is not None and offered.get("length") == str(path.stat().st_size)
    assert len(await reader.read_chapter(changed)) == 5


async def test_a_locked_library_downloads_through_basic_and_signed_links(
    locked_host: ServedHost, library: Path
) -> None:
    reader = Reader(locked_host.client, auth=GOOD)
    feeds = await series_feeds(reader, "Local Library")
    offered = href(feeds[0].findall("a:entry", NS)[0], REL_ACQUISITION, CBZ)
    assert "sig=" in offered
    # A download manager that sends no credentials still gets the file it was linked to...
    answer = await locked_host.client.get(offered)
    assert answer.status_code == 200
    assert answer.headers["cache-control"].startswith("private")
    name = filename_of(answer.headers["content-disposition"])
    assert answer.content == file_named(library, name)
    # ...but the route itself is closed without them, and open with them.
    bare = offered.split("?")[0]
    assert (await locked_host.client.get(bare)).status_code == 401
    assert (await reader.get(bare)).content == answer.content


async def test_a_source_without_files_offers_no_download(mangadex_host: ServedHost) -> None:
    reader = Reader(mangadex_host.client)
    feeds = await series_feeds(reader, "MangaDex")
    chapters = [entry for feed in feeds for entry in feed.findall("a:entry", NS)]
    assert chapters
    assert all(link(entry, REL_ACQUISITION) is None for entry in chapters)
    # Nor does the chapter's own feed (where a chapter without a known count leads).
    chapter_feed = await reader.feed(href(chapters[0], STREAM).split("/pages/")[0])
    entry = chapter_feed.find("a:entry", NS)
    assert entry is not None and link(entry, REL_ACQUISITION) is None


async def test_opds2_publications_carry_the_archive(local_host: ServedHost, library: Path) -> None:
    client = local_host.client
    titles = await get_json(client, "/_/opds/v2/local/all")
    series = await get_json(client, titles["navigation"][0]["href"])
    assert_feed(series)
    assert series["publications"]
    for publication in series["publications"]:
        files = [item for item in publication["links"] if item.get("rel") == REL_ACQUISITION]
        assert len(files) == 1 and files[0]["type"] == CBZ
        answer = await client.get(files[0]["href"])
        assert answer.status_code == 200
        name = filename_of(answer.headers["content-disposition"])
        assert answer.content == file_named(library, name)


async def test_series_feeds_are_acquisition_feeds_to_nypl(mixed_host: ServedHost) -> None:
    """Every series feed, the folder of images' included, is what it says it is to a parser
    that follows OPDS 1.2's rule: every entry can be acquired."""
    reader = Reader(mixed_host.client)
    feeds = await series_feeds(reader, "Local Library")
    assert len(feeds) == 4
    for feed in feeds:
        assert nypl.is_acquisition_feed(feed), feed.findtext("a:title", namespaces=NS)
        assert feed.findall("a:entry", NS)
        assert link(feed, "self", ACQUISITION) is not None
