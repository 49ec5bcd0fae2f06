"""What the host says of files it cannot use, and of pages it cannot show."""

import asyncio
import logging
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.helpers.local_sources import SourceFactory, client_for
from toshokan.sdk import RequestContext

from .helpers import cbz, comicinfo, jpeg, rar4

CTX = RequestContext(base_url="http://testserver")
LOGGER = "toshokan.sources.local.source"


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + "?" + parts.query


def broken_library(root: Path) -> None:
    cbz(root / "Fine" / "Ch.1.cbz")
    (root / "Fine" / "Ch.2.cbz").write_bytes(b"PK\x03\x04 not really a zip")
    cbz(root / "Fine" / "Ch.3.cbz", pages={}, extra={"notes.txt": b"no pages here"})


def skipped_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and "skipped" in r.message]


@pytest.mark.anyio
async def test_serve_says_each_skipped_file_once_and_health_counts_them(
    tmp_path: Path, make_source: SourceFactory, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "lib"
    broken_library(root)
    caplog.set_level(logging.INFO, logger=LOGGER)
    source = await make_source(root)
    lines = skipped_lines(caplog)
    assert len(lines) == 2
    assert any("Fine/Ch.2.cbz: unreadable chapter" in line for line in lines)
    assert any("Fine/Ch.3.cbz: contains no images" in line for line in lines)

    # A rescan that finds the same files says nothing again; a new broken file is said.
    await source.rescan({"Fine"})
    assert len(skipped_lines(caplog)) == 2
    (root / "Fine" / "Ch.4.cbz").write_bytes(b"")
    await source.rescan({"Fine"})
    lines = skipped_lines(caplog)
    assert len(lines) == 3 and "Fine/Ch.4.cbz" in lines[-1]

    async with client_for(source) as client:
        health = (await client.get("/local/health")).json()
    assert health["status"] == "ok"
    assert health["detail"].startswith("3 files skipped: Fine/Ch.2.cbz (unreadable chapter")
    assert "Fine/Ch.3.cbz (contains no images)" in health["detail"]


@pytest.mark.anyio
async def test_files_added_while_serving_are_said_when_skipped(
    tmp_path: Path, make_source: SourceFactory, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "lib"
    cbz(root / "Fine" / "Ch.1.cbz")
    caplog.set_level(logging.INFO, logger=LOGGER)
    await make_source(root, watch=True)
    assert skipped_lines(caplog) == []
    (root / "Fine" / "Ch.2.cbz").write_bytes(b"garbage")
    for _ in range(200):
        if skipped_lines(caplog):
            break
        await asyncio.sleep(0.05)
    assert [line for line in skipped_lines(caplog) if "Fine/Ch.2.cbz" in line]


@pytest.mark.anyio
async def test_archives_are_read_by_their_bytes_not_their_extension(
    tmp_path: Path, make_source: SourceFactory
) -> None:
    """A zip named .cbr (common) and a RAR named .cbz are chapters like any other."""
    root = tmp_path / "lib"
    cbz(root / "Mixed" / "Ch.1.cbr", pages={"1.jpg": jpeg(), "2.jpg": jpeg()})
    (root / "Mixed" / "Ch.2.cbz").write_bytes(rar4({"1.jpg": jpeg()}))
    source = await make_source(root)
    chapters = {c.slug: c for c in await source.chapters("mixed", CTX)}
    assert set(chapters) == {"ch-1", "ch-2"}
    async with client_for(source) as client:
        for slug, count in (("ch-1", 2), ("ch-2", 1)):
            urls = await source.pages("mixed", slug, CTX)
            assert len(urls) == count
            page = await client.get(path_of(urls[0]))
            assert page.status_code == 200 and page.content == jpeg()
        download = await source.download("mixed", "ch-1", CTX)
        assert download is not None
        assert download.media_type == "application/vnd.comicbook+zip"
        got = await client.get(path_of(download.url))
        assert got.status_code == 200 and got.content[:4] == b"PK\x03\x04"


def _corrupted_cbz(path: Path) -> Path:
    """Page 2 is text with an image's name; page 3 is stored with its bytes damaged."""
    cbz(path, pages={"1.jpg": jpeg(), "2.jpg": b"<html>not an image</html>", "3.jpg": jpeg()})
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        third = archive.getinfo("3.jpg")
    start = third.header_offset + 30 + len(third.filename.encode()) + len(third.extra)
    data[start + 40 : start + 48] = b"\x00" * 8  # the CRC no longer matches
    path.write_bytes(bytes(data))
    return path


@pytest.mark.anyio
async def test_a_page_that_cannot_be_decoded_is_a_damaged_page_not_a_broken_image(
    tmp_path: Path, make_source: SourceFactory
) -> None:
    root = tmp_path / "lib"
    _corrupted_cbz(root / "Worn" / "Ch.1.cbz")
    source = await make_source(root)
    report = await source.rescan()
    assert ("Worn/Ch.1.cbz", "page 2 ('2.jpg') is damaged: its bytes are not an image") in (
        report.warnings
    )
    urls = await source.pages("worn", "ch-1", CTX)
    assert len(urls) == 3  # the pages after it keep their numbers
    async with client_for(source) as client:
        assert (await client.get(path_of(urls[0]))).status_code == 200
        for damaged in (urls[1], urls[2]):
            answer = await client.get(path_of(damaged))
            assert answer.status_code == 502
            assert answer.headers["content-type"].startswith("application/json")
            error = answer.json()["error"]
            assert error["code"] == "UPSTREAM_ERROR"
            assert "damaged" in error["message"]


@pytest.mark.anyio
async def test_comicinfo_manga_right_to_left_is_the_series_reading_direction(
    tmp_path: Path, make_source: SourceFactory
) -> None:
    root = tmp_path / "lib"
    for n in (1, 2):
        info = comicinfo(Series="Kaze", Number=str(n), Manga="YesAndRightToLeft")
        cbz(root / "Kaze" / f"Ch.{n}.cbz", info=info)
    cbz(root / "Comic" / "Ch.1.cbz", info=comicinfo(Series="Comic", Manga="No"))
    source = await make_source(root)
    assert (await source.manga("kaze", CTX)).readingDirection == "rtl"
    assert (await source.manga("comic", CTX)).readingDirection is None
    async with client_for(source) as client:
        details = (await client.get("/local/kaze")).json()
    assert details["readingDirection"] == "rtl"
