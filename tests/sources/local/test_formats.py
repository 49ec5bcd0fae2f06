"""Chapters that are not archives of images: PDFs rendered on demand, EPUBs of page images."""

import io
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pypdfium2
import pytest
from PIL import Image

from tests.helpers.local_sources import SourceFactory, client_for
from toshokan.sdk import RequestContext, archives
from toshokan.sdk.archives import DiskCache
from toshokan.sources.local.index import Index
from toshokan.sources.local.scanner import Scanner

from .helpers import cbz, epub, jpeg, pdf

CTX = RequestContext(base_url="http://testserver")
RED, BLUE = (255, 0, 0), (0, 0, 255)


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + "?" + parts.query


def picture(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def near(colour: object, expected: tuple[int, int, int]) -> bool:
    assert isinstance(colour, tuple)
    return all(abs(a - b) < 12 for a, b in zip(colour, expected, strict=False))


@pytest.mark.anyio
async def test_pdf_chapter_pages_are_rendered(make_source: SourceFactory, tmp_path: Path) -> None:
    root = tmp_path / "lib"
    pdf(root / "Paper Moon" / "Paper Moon - Chapter 3.pdf", [(600, 900, RED), (600, 400, BLUE)])
    cbz(root / "Paper Moon" / "Paper Moon - Chapter 2.cbz")
    source = await make_source(root)
    chapters = await source.chapters("paper-moon", CTX)
    third = next(c for c in chapters if c.number == 3)
    assert third.title == "Chapter 3"
    urls = await source.pages("paper-moon", third.slug, CTX)
    assert len(urls) == 2
    async with client_for(source) as client:
        first = await client.get(path_of(urls[0]))
        second = await client.get(path_of(urls[1]))
        again = await client.get(path_of(urls[1]))
    assert first.status_code == second.status_code == 200
    assert first.headers["content-type"] == "image/jpeg"
    tall, wide = picture(first.content), picture(second.content)
    # The longer side is rendered at the bound; the aspect ratio is the page's.
    assert tall.height == wide.width == archives.PDF_LONG_SIDE
    assert abs(tall.width - 1333) <= 1 and abs(wide.height - 1333) <= 1
    assert near(tall.getpixel((600, 900)), RED)
    assert near(wide.getpixel((900, 600)), BLUE)
    assert again.content == second.content
    assert again.headers["etag"] == second.headers["etag"]
    renders = tmp_path / "data" / "local" / "local-renders"
    assert len(list(renders.glob("*/*"))) == 2  # each page rendered and kept once


@pytest.mark.anyio
async def test_rendered_pages_come_from_the_cache(
    make_source: SourceFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "lib"
    pdf(root / "Paper Moon" / "Ch 1.pdf", [(300, 450, RED)])
    source = await make_source(root)
    url = (
        await source.pages("paper-moon", (await source.chapters("paper-moon", CTX))[0].slug, CTX)
    )[0]
    async with client_for(source) as client:
        rendered = (await client.get(path_of(url))).content

        def refuse(*args: object) -> None:
            raise AssertionError("PDFium used again")

        # A rendered page is served from the cache without even opening the document.
        monkeypatch.setattr(pypdfium2, "PdfDocument", refuse)
        cached = await client.get(path_of(url))
    assert cached.status_code == 200 and cached.content == rendered


def test_pdf_scanning_bounds_and_damage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "lib"
    pdf(root / "Long" / "Ch 1.pdf", [(100, 150, RED)] * 5)
    (root / "Long" / "Ch 2.pdf").write_bytes(b"%PDF-1.7 not really")
    monkeypatch.setattr(archives.pdf, "MAX_PDF_PAGES", 3)
    scanner = Scanner(root, Index(tmp_path / "index.sqlite3"))
    report = scanner.scan()
    skipped, warnings = dict(report.skipped), dict(report.warnings)
    assert "not a readable PDF" in skipped["Long/Ch 2.pdf"]
    assert warnings["Long/Ch 1.pdf"] == "only the first 3 of 5 pages listed"
    row = scanner.index.reader().execute("SELECT kind, page_count FROM chapters").fetchone()
    assert (row["kind"], row["page_count"]) == ("pdf", 3)


def test_disk_cache_keeps_its_size_cap(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path / "cache", max_bytes=1000)
    for n in range(10):
        cache.put(f"key {n}", bytes([n]) * 300)
    kept = [n for n in range(10) if cache.get(f"key {n}") is not None]
    assert sum(p.stat().st_size for p in (tmp_path / "cache").glob("*/*")) <= 1000
    assert kept == [7, 8, 9]  # the most recently written stay
    cache.put("too big", b"x" * 2000)
    assert cache.get("too big") is None


@pytest.mark.anyio
@pytest.mark.parametrize("svg", [False, True])
async def test_epub_pages_follow_the_spine(
    make_source: SourceFactory, tmp_path: Path, svg: bool
) -> None:
    root = tmp_path / "lib"
    colours = [RED, BLUE, (0, 160, 0)]
    # Spine order c, a, b: names sorted would read the book out of order.
    pages = [
        (f"{name}.jpg", jpeg(size=(40, 60), colour=c))
        for name, c in zip("cab", colours, strict=True)
    ]
    epub(root / "Glass Bird" / "Glass Bird v01.epub", pages, svg=svg)
    source = await make_source(root)
    chapters = await source.chapters("glass-bird", CTX)
    assert [(c.number, c.title) for c in chapters] == [(1.0, "Volume 1")]
    urls = await source.pages("glass-bird", chapters[0].slug, CTX)
    assert len(urls) == 3
    async with client_for(source) as client:
        served = [await client.get(path_of(url)) for url in urls]
    assert [r.status_code for r in served] == [200, 200, 200]
    assert [r.content for r in served] == [data for _, data in pages]


def test_text_and_broken_epubs_are_skipped_with_reasons(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    epub(root / "Books" / "Ch 1.epub", [("a.jpg", jpeg())])
    novel = root / "Books" / "Ch 2 novel.epub"
    with (
        zipfile.ZipFile(root / "Books" / "Ch 1.epub") as source,
        zipfile.ZipFile(novel, "w") as out,
    ):
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith(".xhtml"):
                data = b"<html><body><p>Once upon a time</p></body></html>"
            out.writestr(info.filename, data)
    cbz(root / "Books" / "Ch 3 no container.epub")
    (root / "Books" / "Ch 4 garbage.epub").write_bytes(b"PK not really")
    with zipfile.ZipFile(root / "Books" / "Ch 5 bad opf.epub", "w") as out:
        out.writestr(
            "META-INF/container.xml",
            '<container><rootfiles><rootfile full-path="../../etc/passwd"/></rootfiles></container>',
        )
    scanner = Scanner(root, Index(tmp_path / "index.sqlite3"))
    skipped = dict(scanner.scan().skipped)
    assert skipped["Books/Ch 2 novel.epub"] == "contains no images"
    assert "Books/Ch 3 no container.epub" in skipped
    assert "not a readable zip" in skipped["Books/Ch 4 garbage.epub"]
    assert "no package document" in skipped["Books/Ch 5 bad opf.epub"]
    kinds = scanner.index.reader().execute("SELECT relpath, kind FROM chapters").fetchall()
    assert [tuple(row) for row in kinds] == [("Books/Ch 1.epub", "epub")]


def test_epub_spine_reading_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = epub(tmp_path / "book.epub", [(f"{n}.jpg", jpeg()) for n in range(1, 6)])
    with zipfile.ZipFile(path) as archive:
        document = archive.getinfo("OEBPS/text/page1.xhtml").file_size
    monkeypatch.setattr(archives.epub, "MAX_EPUB_TEXT_BYTES", document * 2)
    with archives.EpubReader(path) as reader:
        listing = reader.listing(comicinfo_limit=1024)
    assert [m.name for m in listing.pages] == ["OEBPS/images/1.jpg", "OEBPS/images/2.jpg"]
    assert "bytes in all ignored" in listing.warnings[0]
