"""Archive work within bounds: buffered memory, solid-block decompression, directories
read once, and archive work kept off the threads searches use."""

import threading
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import py7zr
import pytest

from tests.helpers.local_sources import SourceFactory, client_for
from toshokan.sdk import RequestContext, archives
from toshokan.sdk.archives import ArchiveError, SevenZipReader, ZipScan
from toshokan.sources.local import pages as pages_module

from .helpers import cbz, jpeg

pytestmark = pytest.mark.anyio
CTX = RequestContext(base_url="http://testserver")


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + ("?" + parts.query if parts.query else "")


def solid_7z(path: Path, entries: dict[str, bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with py7zr.SevenZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(data, name)
    return path


def test_solid_block_work_is_counted_and_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = jpeg()
    path = solid_7z(
        tmp_path / "s.7z", {"1.jpg": page + b"\x00" * 5000, "2.jpg": page, "3.jpg": page}
    )
    reader = SevenZipReader(path)
    with reader:
        assert reader.work("1.jpg") == len(page) + 5000
        assert reader.work("3.jpg") == 3 * len(page) + 5000
        monkeypatch.setattr(archives.limits, "MAX_DECOMPRESS_WORK", len(page) + 5000)
        assert reader.read("1.jpg", 10**6).startswith(page)
        # A tiny page behind a large one costs the large one too: refused.
        with pytest.raises(ArchiveError, match="decompressed"):
            reader.read("2.jpg", 10**6)


async def test_pages_over_the_limits_are_refused_not_buffered(
    tmp_path: Path, make_source: SourceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = jpeg()
    solid_7z(
        tmp_path / "lib" / "S" / "Ch.1.cb7",
        {"1.jpg": page, "2.jpg": page + b"\x00" * 20_000, "3.jpg": page},
    )
    source = await make_source(tmp_path / "lib")
    urls = await source.pages("s", "ch-1", CTX)
    monkeypatch.setattr(pages_module, "WHOLE_READ_LIMIT", 10_000)
    monkeypatch.setattr(archives.limits, "MAX_BUFFERED_BYTES", 15_000)
    async with client_for(source) as client:
        assert (await client.get(path_of(urls[0]))).content == page
        # Page 2 must be held in memory to serve, and is larger than the cap.
        assert (await client.get(path_of(urls[1]))).status_code == 404
        monkeypatch.setattr(archives.limits, "MAX_DECOMPRESS_WORK", 2 * len(page))
        # Page 3 needs page 2 decompressed first.
        assert (await client.get(path_of(urls[2]))).status_code == 404


async def test_a_zip_directory_is_read_once_for_all_its_pages(
    tmp_path: Path, make_source: SourceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    chapter = cbz(tmp_path / "lib" / "S" / "Ch.1.cbz", pages=5)
    source = await make_source(tmp_path / "lib")
    urls = await source.pages("s", "ch-1", CTX)
    opened: list[str] = []
    threads: set[str] = set()
    real_init: Any = zipfile.ZipFile.__init__

    def counting(self: zipfile.ZipFile, *args: object, **kwargs: object) -> None:
        if (args[1:] or [kwargs.get("mode", "r")])[0] == "r":
            opened.append(str(args[0]))
            threads.add(threading.current_thread().name)
        real_init(self, *args, **kwargs)

    real_scan: Any = ZipScan.__init__

    def counting_scans(self: ZipScan, path: object) -> None:
        opened.append(str(path))
        threads.add(threading.current_thread().name)
        real_scan(self, path)

    # Either reads the directory: ZipScan a plain zip's, zipfile any other.
    monkeypatch.setattr(zipfile.ZipFile, "__init__", counting)
    monkeypatch.setattr(ZipScan, "__init__", counting_scans)
    async with client_for(source) as client:
        for url in urls:
            assert (await client.get(path_of(url))).status_code == 200
        assert len(opened) == 1
        assert all(name.startswith("toshokan-archive") for name in threads)
        # Replaced on disk: reopened, and the new content is served.
        cbz(chapter, pages={f"{n}.jpg": jpeg(size=(16, 16)) for n in range(1, 6)})
        response = await client.get(path_of(urls[0]))
        assert len(opened) == 2
        with zipfile.ZipFile(chapter) as archive:
            assert response.content == archive.read("1.jpg")


@pytest.mark.parametrize("declared", [100, 2_000])
def test_an_entry_inflating_past_its_declared_size_is_refused(
    tmp_path: Path, declared: int
) -> None:
    """A scan reads ComicInfo.xml off the archive's file in one go: an entry whose bytes
    inflate to more than its directory says is refused there as zipfile refuses it."""
    path = tmp_path / "bomb.cbz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("001.jpg", jpeg())
        archive.writestr("ComicInfo.xml", b"<ComicInfo>" + b" " * 5_000_000 + b"</ComicInfo>")
    data = bytearray(path.read_bytes())
    central = data.index(b"PK\x01\x02", data.index(b"PK\x01\x02") + 4)  # ComicInfo's entry
    data[central + 24 : central + 28] = declared.to_bytes(4, "little")
    path.write_bytes(bytes(data))
    reader = archives.ZipReader(path)
    try:
        with pytest.raises(ArchiveError):
            reader.read("ComicInfo.xml", 1 << 20)
        assert reader.read("001.jpg", 1 << 20) == jpeg()
    finally:
        reader.close()


async def test_a_chapter_file_that_leaves_the_library_is_not_served(
    tmp_path: Path, make_source: SourceFactory
) -> None:
    """Its path is followed to the real file before anything is opened: a chapter turned
    into a link out of the library, or into a link loop, serves nothing."""
    chapter = cbz(tmp_path / "lib" / "S" / "Ch.1.cbz", pages=2)
    source = await make_source(tmp_path / "lib")
    urls = await source.pages("s", "ch-1", CTX)
    outside = tmp_path / "elsewhere.cbz"
    chapter.rename(outside)
    async with client_for(source) as client:
        chapter.symlink_to(outside)
        escaped = await client.get(path_of(urls[0]))
        chapter.unlink()
        chapter.symlink_to(chapter)
        looped = await client.get(path_of(urls[0]))
        chapter.unlink()
        gone = await client.get(path_of(urls[0]))
    for answer in (escaped, looped):
        assert answer.status_code == 404
        assert "no longer in the library" in answer.text
    assert gone.status_code == 404
    assert "no longer readable in the library" in gone.text
