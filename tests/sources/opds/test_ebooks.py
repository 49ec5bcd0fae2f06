"""Books a catalogue offers only as a PDF or an EPUB are read page by page, like comic archives."""

import pytest

from tests.sources.opds.fakes import Calibre
from tests.sources.opds.helpers import get_json, pixel, read_all_pages, search, serve_opds

pytestmark = pytest.mark.anyio


async def _chapter(host, title: str) -> tuple[str, str]:
    found = await search(host, query=title.split()[0].lower())
    slug = found["results"][0]["slug"]
    chapters = await get_json(host, f"/shelf/{slug}/chapters")
    return slug, chapters[0]["slug"]


async def test_a_pdf_is_rendered_page_by_page_and_kept(tmp_path):
    calibre = Calibre()
    calibre.formats = {2: ["PDF"]}  # Star Atlas: four pages, red 21..24
    async with serve_opds(calibre, tmp_path) as host:
        slug, chapter = await _chapter(host, "Star Atlas")
        first = await read_all_pages(host, slug, chapter)
        again = await read_all_pages(host, slug, chapter)
    assert len(first) == 4
    assert all(page.startswith(b"\xff\xd8") for page in first)  # rendered to JPEG
    reds = [pixel(page)[0] for page in first]
    assert all(abs(red - want) <= 3 for red, want in zip(reds, [21, 22, 23, 24], strict=True))
    assert again == first
    assert calibre.downloads == 1
    # each page rendered once and kept: reading the book again rendered nothing new
    assert len(list((tmp_path / "opds" / "shelf" / "renders").rglob("*.jpg"))) == 4


async def test_a_fixed_layout_epub_is_read_in_spine_order(tmp_path):
    calibre = Calibre()
    calibre.formats = {1: ["EPUB"]}  # Moon Letters: three pages, red 11..13
    async with serve_opds(calibre, tmp_path) as host:
        slug, chapter = await _chapter(host, "Moon Letters")
        pages = await read_all_pages(host, slug, chapter)
    assert [pixel(page)[0] for page in pages] == [11, 12, 13]
    assert calibre.downloads == 1


async def test_a_comic_archive_is_preferred_to_a_pdf_of_the_same_book(tmp_path):
    calibre = Calibre()
    calibre.formats = {3: ["PDF", "EPUB", "CBZ"]}
    async with serve_opds(calibre, tmp_path) as host:
        slug, chapter = await _chapter(host, "Sun Diary")
        pages = await read_all_pages(host, slug, chapter)
    assert [pixel(page)[0] for page in pages] == [31, 32]
    assert [p for p in calibre.paths if p.startswith("/get/")] == ["/get/CBZ/3/Calibre_Library"]


async def test_an_epub_of_text_has_no_pages_to_show(tmp_path):
    calibre = Calibre()
    calibre.formats = {1: ["TXT"]}
    async with serve_opds(calibre, tmp_path) as host:
        slug, chapter = await _chapter(host, "Moon Letters")
        answer = await host.client.get(f"/shelf/{slug}/chapters/{chapter}")
    assert answer.status_code == 502
    assert answer.json()["error"]["code"] == "UPSTREAM_ERROR"
    assert "no page images" in answer.json()["error"]["message"]
