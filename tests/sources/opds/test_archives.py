"""The cache of downloaded books stays under its size cap, dropping the least recently used."""

import asyncio
import io
import os
import zipfile
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.sources.local.helpers import assert_shows_marked, encoded, marked
from tests.sources.opds.fakes import cbz
from toshokan.sdk import UpstreamError
from toshokan.sources.opds.archives import ArchiveCache, readable
from toshokan.sources.opds.feed import Acquisition

pytestmark = pytest.mark.anyio


class Books:
    """A cache of books downloaded from ``bodies`` (URL to bytes), recording what it fetched."""

    def __init__(self, folder: Path, capacity: int, bodies: dict[str, bytes]):
        self.cache = ArchiveCache(folder, capacity=capacity, max_file=10**7)
        self.bodies = bodies
        self.fetched: list[str] = []

    async def download(self, url: str, dest: Path, max_bytes: int) -> int:
        self.fetched.append(url)
        body = self.bodies[url]
        if len(body) > max_bytes:
            raise UpstreamError("too large")
        await asyncio.to_thread(dest.write_bytes, body)
        return len(body)

    async def pages(self, url: str) -> list[Any]:
        return await self.cache.pages(url, self.download)

    async def page(self, url: str, number: int) -> tuple[bytes, str]:
        return await self.cache.page(url, number, self.download)


async def test_least_recently_used_books_make_room(tmp_path):
    bodies = {f"http://c.test/{n}": cbz(3, seed=n) for n in range(3)}
    size = max(len(body) for body in bodies.values())
    books = Books(tmp_path, 2 * size + 10, bodies)
    await books.pages("http://c.test/0")
    await books.pages("http://c.test/1")
    os.utime(next(p for p in tmp_path.iterdir() if p.stat().st_size), (1, 1))  # make one older
    oldest = min(tmp_path.iterdir(), key=lambda p: p.stat().st_mtime)
    await books.pages("http://c.test/2")
    files = list(tmp_path.iterdir())
    assert len(files) == 2 and oldest not in files
    assert sum(p.stat().st_size for p in files) <= 2 * size + 10
    data, kind = await books.page("http://c.test/2", 3)
    assert kind == "image/png" and data.startswith(b"\x89PNG")
    assert books.fetched == ["http://c.test/0", "http://c.test/1", "http://c.test/2"]


async def test_a_download_that_is_not_a_book_is_an_upstream_error(tmp_path):
    bodies = {"http://c.test/x": b"<html>Sign in</html>", "http://c.test/y": b"%PDF-1.7 cut"}
    books = Books(tmp_path, 10**6, bodies)
    for url in bodies:
        with pytest.raises(UpstreamError, match="cannot be read"):
            await books.pages(url)


def test_comic_archives_are_preferred_over_other_downloads():
    offered = [
        Acquisition("http://c.test/book.epub", "application/epub+zip"),
        Acquisition("http://c.test/book.pdf", "application/pdf"),
        Acquisition("http://c.test/book.cbr", "application/x-cbr"),
        Acquisition("http://c.test/book.cbz", "application/vnd.comicbook+zip"),
    ]
    assert readable(offered) == offered[3]
    assert readable(offered[:2]) == offered[1]  # every PDF page renders; an EPUB may be text
    assert readable([]) is None


async def test_a_book_dropped_between_listing_and_reading_is_fetched_again(tmp_path):
    books = Books(tmp_path, 10**6, {"http://c.test/a": cbz(2)})
    await books.pages("http://c.test/a")
    for kept in tmp_path.iterdir():
        kept.unlink()
    data, _ = await books.page("http://c.test/a", 2)
    assert data.startswith(b"\x89PNG") and books.fetched == ["http://c.test/a"] * 2


async def test_bmp_and_tiff_pages_of_a_book_are_served_as_png(tmp_path):
    book = io.BytesIO()
    with zipfile.ZipFile(book, "w") as archive:
        archive.writestr("1.bmp", encoded(marked((20, 160, 20)), "BMP"))
        archive.writestr("2.tif", encoded(marked((20, 20, 220)), "TIFF"))
        archive.writestr("3.jpg", encoded(marked((220, 20, 20)), "JPEG"))
    books = Books(tmp_path, 10**6, {"http://c.test/scans": book.getvalue()})
    assert len(await books.pages("http://c.test/scans")) == 3
    for number, colour in ((1, (20, 160, 20)), (2, (20, 20, 220))):
        data, media_type = await books.page("http://c.test/scans", number)
        shown = Image.open(io.BytesIO(data))
        assert (media_type, shown.format) == ("image/png", "PNG")
        assert_shows_marked(shown, colour)
    data, media_type = await books.page("http://c.test/scans", 3)
    assert media_type == "image/jpeg" and data.startswith(b"\xff\xd8\xff")
