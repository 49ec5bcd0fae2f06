"""What a PSE reader is promised is what it gets: the declared type, upright pages.

The stream link declares one type for every page of a chapter; pages in an
archive come in several formats and carry EXIF orientations that PSE readers
ignore. Every answer is checked by decoding it, not by its headers alone.
"""

import io
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from PIL import Image

from tests.sources.local.helpers import assert_shows_marked, cbz, encoded, marked, oriented_jpeg
from toshokan.faces.opds.atom import PSE
from toshokan.sources.local import LocalLibrary, LocalSettings
from toshokan.testing import ServedHost, serve_host

from .reader import ACQUISITION, NS, STREAM, Reader, entry_titled, href, link
from .servers import SECRET

pytestmark = pytest.mark.anyio

#: The types PSE allows in a stream link, and the format their bytes decode as.
FORMATS = {"image/jpeg": "JPEG", "image/png": "PNG", "image/gif": "GIF"}


@pytest.fixture
async def mixed_host(tmp_path: Path) -> AsyncIterator[ServedHost]:
    library = tmp_path / "library"
    formats = {
        "01.png": encoded(marked(), "PNG"),
        "02.gif": encoded(marked(), "GIF"),
        "03.webp": encoded(marked(), "WEBP", quality=95),
        "04.jpg": encoded(marked(), "JPEG", quality=95),
        "05.png": encoded(marked().convert("RGBA"), "PNG"),
    }
    cbz(library / "Formats" / "Formats Ch.1.cbz", formats)
    turned = {f"{n:02}.jpg": oriented_jpeg(n) for n in range(1, 9)}
    cbz(library / "Turned" / "Turned Ch.1.cbz", turned)
    spec = (LocalLibrary, LocalSettings(root=library, watch=False))
    async with serve_host(
        {"local": spec}, data_dir=tmp_path / "data", host={"secret": SECRET}
    ) as served:
        yield served


async def stream(
    host: ServedHost, series_title: str, max_width: int | None
) -> tuple[str, list[httpx.Response]]:
    """The chapter's declared page type, and every page as the PSE template gives it."""
    reader = Reader(host.client)
    series = entry_titled(await reader.feed("/_/opds/local/all"), series_title)
    chapter = (await reader.feed(href(series, "subsection", ACQUISITION))).findall("a:entry", NS)[0]
    found = link(chapter, STREAM)
    assert found is not None
    template, width = found.get("href") or "", str(max_width) if max_width else ""
    answers = []
    for number in range(int(found.get(f"{{{PSE}}}count") or 0)):
        url = template.replace("{pageNumber}", str(number)).replace("{maxWidth}", width)
        answer = await reader.get(url)
        assert answer.status_code == 200, url
        answers.append(answer)
    return found.get("type") or "", answers


@pytest.mark.parametrize("max_width", [None, 30])
async def test_every_page_is_the_type_the_stream_link_declares(
    mixed_host: ServedHost, max_width: int | None
) -> None:
    declared, answers = await stream(mixed_host, "Formats", max_width)
    assert declared in FORMATS and len(answers) == 5
    for number, answer in enumerate(answers):
        assert answer.headers["content-type"] == declared, number
        shown = Image.open(io.BytesIO(answer.content))
        assert shown.format == FORMATS[declared], number
        assert_shows_marked(shown, width=max_width or 60)


@pytest.mark.parametrize("max_width", [None, 30])
async def test_pages_stored_sideways_stream_upright(
    mixed_host: ServedHost, max_width: int | None
) -> None:
    """EXIF orientations 1 to 8, at full size and resized: the decoded pixels are upright."""
    _, answers = await stream(mixed_host, "Turned", max_width)
    assert len(answers) == 8
    for answer in answers:
        assert_shows_marked(Image.open(io.BytesIO(answer.content)), width=max_width or 60)
