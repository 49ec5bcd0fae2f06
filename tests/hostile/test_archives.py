"""Hostile chapters in a library, through the page route: each page is answered
promptly with the image or a clean Error, never a 500, and an archive's
directory is not reread for every page."""

import shutil
from pathlib import Path
from urllib.parse import urlsplit

import py7zr
import pytest
import rarfile

from tests.helpers.local_sources import SourceFactory, client_for
from tests.sdk.archive_files import FIXTURES, count_opens, image_pdf, pages, seven_zip
from tests.sources.local.helpers import rar4
from toshokan.sdk import RequestContext

pytestmark = pytest.mark.anyio
CTX = RequestContext(base_url="http://testserver")


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + ("?" + parts.query if parts.query else "")


@pytest.mark.parametrize("kind", ["cb7", "cbr"])
async def test_pages_of_a_large_archive_share_one_directory_read(
    tmp_path: Path, make_source: SourceFactory, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    entries = pages(60)
    chapter = tmp_path / "lib" / "S" / f"Ch.1.{kind}"
    if kind == "cb7":
        seven_zip(chapter, entries)
    else:
        chapter.parent.mkdir(parents=True)
        chapter.write_bytes(rar4(entries))
    source = await make_source(tmp_path / "lib")
    urls = await source.pages("s", "ch-1", CTX)
    assert len(urls) == 60
    opened = count_opens(monkeypatch, py7zr.SevenZipFile if kind == "cb7" else rarfile.RarFile)
    async with client_for(source) as client:
        for url, data in zip(urls, entries.values(), strict=True):
            answer = await client.get(path_of(url))
            assert answer.status_code == 200 and answer.content == data
    assert len(opened) <= 1  # the scan may have left none idle


async def test_pages_of_a_solid_rar_past_the_work_bound_are_404(
    tmp_path: Path, make_source: SourceFactory
) -> None:
    chapter = tmp_path / "lib" / "S" / "Ch.1.cbr"
    chapter.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "solid-100m.rar", chapter)
    source = await make_source(tmp_path / "lib")
    urls = await source.pages("s", "ch-1", CTX)
    async with client_for(source) as client:
        for url in urls:
            answer = await client.get(path_of(url))
            assert answer.status_code == 404
            assert answer.json()["error"]["code"] == "NOT_FOUND"


async def test_a_pdf_page_drawing_a_huge_image_is_a_404(
    tmp_path: Path, make_source: SourceFactory
) -> None:
    image_pdf(tmp_path / "lib" / "S" / "Ch.1.pdf", 20_000, 20_000)
    source = await make_source(tmp_path / "lib")
    urls = await source.pages("s", "ch-1", CTX)
    async with client_for(source) as client:
        answer = await client.get(path_of(urls[0]))
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "NOT_FOUND"
