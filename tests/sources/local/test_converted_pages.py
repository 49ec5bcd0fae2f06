"""BMP and TIFF pages: listed with the others, served as a format every reader displays.

Scanners and old tools leave them in archives and folders; readers and
browsers do not all display them, so every route that serves a page answers
them as PNG (or, through the image pipeline, JPEG). Downloads stay the
archive as it lies in the library.
"""

import io
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from PIL import Image

from tests.helpers.local_sources import SourceFactory, client_for
from toshokan.models import SearchRequest
from toshokan.sdk import RequestContext
from toshokan.sdk.names import IMAGE_TYPES

from .helpers import STORED_FOR, assert_shows_marked, cbz, encoded, marked, oriented_jpeg

pytestmark = pytest.mark.anyio
CTX = RequestContext(base_url="http://testserver")
#: Each page's marker colour, in reading order, so a page is told from the others.
COLOURS = [(220, 20, 20), (20, 160, 20), (20, 20, 220), (230, 140, 20), (140, 20, 160)]
ARCHIVE = Path("Scans") / "Scans Ch.1.cbz"
#: Formats a reader displays, by the media type they are answered with.
DISPLAYED = {"image/jpeg": "JPEG", "image/png": "PNG", "image/gif": "GIF"}


def pages() -> dict[str, bytes]:
    """Five pages, two of them BMP and two TIFF (one stored sideways with its EXIF tag)."""
    sideways = marked(COLOURS[4]).transpose(STORED_FOR[6] or Image.Transpose.ROTATE_90)
    return {
        "1.jpg": oriented_jpeg(1, COLOURS[0]),
        "2.bmp": encoded(marked(COLOURS[1]), "BMP"),
        "3.png": encoded(marked(COLOURS[2]), "PNG"),
        "4.tiff": encoded(marked(COLOURS[3]).convert("CMYK"), "TIFF", compression="tiff_lzw"),
        "5.TIF": encoded(sideways, "TIFF", tiffinfo={0x0112: 6}),
    }


def library(root: Path) -> Path:
    cbz(root / ARCHIVE, pages())
    folder = root / "Scans" / "Scans Ch.2"
    folder.mkdir(parents=True)
    for name, data in pages().items():
        (folder / name).write_bytes(data)
    (root / "Scans" / "cover.bmp").write_bytes(encoded(marked(COLOURS[1]), "BMP"))
    return root


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + ("?" + parts.query if parts.query else "")


def assert_displayed(answer: httpx.Response, colour: tuple[int, int, int]) -> None:
    """A format readers display, as its Content-Type says, showing the page upright."""
    assert answer.status_code == 200, answer.text[:200]
    kind = answer.headers["content-type"]
    shown = Image.open(io.BytesIO(answer.content))
    assert shown.format == DISPLAYED.get(kind), (kind, shown.format)
    assert_shows_marked(shown, colour)


async def test_every_page_is_listed_and_served_displayable(
    make_source: SourceFactory, tmp_path: Path
) -> None:
    source = await make_source(library(tmp_path / "lib"))
    chapters = await source.chapters("scans", CTX)
    assert len(chapters) == 2
    async with client_for(source) as client:
        for chapter in chapters:
            urls = await source.pages("scans", chapter.slug, CTX)
            assert len(urls) == 5, chapter.slug
            for url, colour in zip(urls, COLOURS, strict=True):
                assert_displayed(await client.get(path_of(url)), colour)
            again = await client.get(path_of(urls[1]), headers={"Range": "bytes=0-7"})
            assert again.status_code == 206 and again.content == b"\x89PNG\r\n\x1a\n"


async def test_the_opds_stream_and_the_app_get_every_page(
    make_source: SourceFactory, tmp_path: Path
) -> None:
    source = await make_source(library(tmp_path / "lib"))
    chapter = (await source.chapters("scans", CTX))[0].slug
    async with client_for(source) as client:
        stream = f"/_/opds/local/series/scans/{chapter}/pages"
        for number, colour in enumerate(COLOURS):
            assert_displayed(await client.get(f"{stream}/{number}"), colour)
        assert (await client.get(f"{stream}/5")).status_code == 404
        app = (await client.get("/_/alethia/local/scans/chapters")).json()
        app_pages = (await client.get(f"/_/alethia/local/1/chapters/{app[0]['slug']}")).json()
        assert len(app_pages) == 5
        for url, colour in zip(app_pages, COLOURS, strict=True):
            assert_displayed(await client.get(url), colour)


async def test_a_bmp_cover_and_the_download_byte_for_byte(
    make_source: SourceFactory, tmp_path: Path
) -> None:
    root = library(tmp_path / "lib")
    source = await make_source(root)
    details = await source.manga("scans", CTX)
    [listed] = (await source.search(SearchRequest(page=1, sort="title"), CTX)).results
    chapter = next(c for c in await source.chapters("scans", CTX) if "2" not in c.slug)
    download = await source.download("scans", chapter.slug, CTX)
    assert download is not None
    async with client_for(source) as client:
        assert_displayed(await client.get(path_of(details.covers[0])), COLOURS[1])
        thumbnail = await client.get(path_of(listed.cover or ""))
        assert_displayed(thumbnail, COLOURS[1])
        archive = await client.get(path_of(download.url))
    assert archive.content == (root / ARCHIVE).read_bytes()


async def test_a_library_scanned_before_reads_its_bmp_and_tiff_pages(
    make_source: SourceFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An archive indexed when BMP and TIFF were not pages is read again, though unchanged."""
    root = library(tmp_path / "lib")
    for suffix in (".bmp", ".tif", ".tiff"):
        monkeypatch.delitem(IMAGE_TYPES, suffix)
    before = await make_source(root)
    assert len(await before.pages("scans", "ch-1", CTX)) == 2
    monkeypatch.undo()
    after = await make_source(root)
    assert len(await after.pages("scans", "ch-1", CTX)) == 5
