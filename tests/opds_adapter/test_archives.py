"""The cache of downloaded books stays under its size cap, dropping the least recently used."""

import asyncio
import os
from pathlib import Path

import pytest

from tests.opds_adapter.fakes import cbz
from toshokan.sdk import UpstreamError
from toshokan.sources.opds.archives import ArchiveCache, readable
from toshokan.sources.opds.feed import Acquisition

pytestmark = pytest.mark.anyio


def cache(
    folder: Path, capacity: int, bodies: dict[str, bytes], fetched: list[str]
) -> ArchiveCache:
    async def download(url: str, dest: Path, max_bytes: int) -> int:
        fetched.append(url)
        body = bodies[url]
        if len(body) > max_bytes:
            raise UpstreamError("too large")
        await asyncio.to_thread(dest.write_bytes, body)
        return len(body)

    return ArchiveCache(folder, capacity=capacity, max_file=10**7, download=download)


async def test_least_recently_used_books_make_room(tmp_path):
    bodies = {f"http://c.test/{n}": cbz(3, seed=n) for n in range(3)}
    size = max(len(body) for body in bodies.values())
    fetched: list[str] = []
    books = cache(tmp_path, 2 * size + 10, bodies, fetched)
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
    assert fetched == ["http://c.test/0", "http://c.test/1", "http://c.test/2"]


async def test_a_download_that_is_not_a_book_is_an_upstream_error(tmp_path):
    bodies = {"http://c.test/x": b"<html>Sign in</html>", "http://c.test/y": b"%PDF-1.7 cut"}
    books = cache(tmp_path, 10**6, bodies, [])
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
    fetched: list[str] = []
    books = cache(tmp_path, 10**6, {"http://c.test/a": cbz(2)}, fetched)
    await books.pages("http://c.test/a")
    for kept in tmp_path.iterdir():
        kept.unlink()
    data, _ = await books.page("http://c.test/a", 2)
    assert data.startswith(b"\x89PNG") and fetched == ["http://c.test/a"] * 2
