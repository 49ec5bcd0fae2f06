"""Covers in lists are thumbnails at most 300 px wide, made once; details keep full size."""

import io
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from PIL import Image

from tests.helpers.local_sources import SourceFactory, client_for
from toshokan.models import SearchRequest
from toshokan.sdk import RequestContext
from toshokan.sources.local import thumbnails

from .helpers import assert_shows_marked, cbz, jpeg, oriented_jpeg, pdf

pytestmark = pytest.mark.anyio
CTX = RequestContext(base_url="http://testserver")


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + ("?" + parts.query if parts.query else "")


def size_of(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        return image.size


def library(root: Path) -> Path:
    (root / "Big Cover").mkdir(parents=True)
    (root / "Big Cover" / "cover.jpg").write_bytes(jpeg(size=(1200, 1800)))
    cbz(root / "Big Cover" / "Ch 1.cbz")
    cbz(root / "Small Cover" / "Ch 1.cbz", pages={"1.jpg": jpeg(size=(120, 180))})
    pdf(root / "Only Pdf" / "Ch 1.pdf", [(600, 900, (0, 128, 0))])
    return root


async def covers_by_slug(source) -> dict[str, str]:
    found = await source.search(SearchRequest(page=1, sort="title"), CTX)
    return {entry.slug: entry.cover for entry in found.results}


async def test_lists_get_thumbnails_and_details_the_full_cover(
    make_source: SourceFactory, tmp_path: Path
) -> None:
    source = await make_source(library(tmp_path / "lib"))
    listed = await covers_by_slug(source)
    assert all("/_/local/thumbnails/" in url for url in listed.values())
    details = await source.manga("big-cover", CTX)
    async with client_for(source) as client:
        big = await client.get(path_of(listed["big-cover"]))
        small = await client.get(path_of(listed["small-cover"]))
        rendered = await client.get(path_of(listed["only-pdf"]))
        full = await client.get(path_of(details.covers[0]))
    assert big.status_code == small.status_code == rendered.status_code == 200
    assert big.headers["content-type"] == "image/jpeg"
    assert size_of(big.content) == (300, 450)  # aspect ratio kept
    assert size_of(small.content) == (120, 180)  # never enlarged
    assert size_of(rendered.content)[0] == 300  # a PDF's first page, rendered then reduced
    assert "/_/local/covers/big-cover" in details.covers[0]
    assert size_of(full.content) == (1200, 1800)


async def test_a_thumbnail_is_made_once(
    make_source: SourceFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = await make_source(library(tmp_path / "lib"))
    url = path_of((await covers_by_slug(source))["big-cover"])
    async with client_for(source) as client:
        first = await client.get(url)

        def refuse(data: bytes, width: int = 300) -> bytes:
            raise AssertionError("made twice")

        monkeypatch.setattr(thumbnails, "thumbnail", refuse)
        again = await client.get(url)
        revalidated = await client.get(url, headers={"If-None-Match": first.headers["etag"]})
    assert again.content == first.content
    assert again.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert revalidated.status_code == 304
    kept = list((tmp_path / "data" / "local" / "local-thumbnails").glob("*/*"))
    assert len(kept) == 1


async def test_a_changed_cover_gets_a_new_thumbnail(
    make_source: SourceFactory, tmp_path: Path
) -> None:
    root = library(tmp_path / "lib")
    source = await make_source(root)
    before = (await covers_by_slug(source))["big-cover"]
    (root / "Big Cover" / "cover.jpg").write_bytes(jpeg(size=(900, 300)))
    await source.rescan()
    after = (await covers_by_slug(source))["big-cover"]
    assert after != before
    async with client_for(source) as client:
        response = await client.get(path_of(after))
    assert size_of(response.content) == (300, 100)


async def test_missing_and_unreadable_covers(make_source: SourceFactory, tmp_path: Path) -> None:
    root = library(tmp_path / "lib")
    source = await make_source(root)
    url = path_of((await covers_by_slug(source))["big-cover"])
    (root / "Big Cover" / "cover.jpg").write_bytes(b"not an image")  # not rescanned yet
    async with client_for(source) as client:
        missing = await client.get("/_/local/thumbnails/no-such-series")
        unreadable = await client.get(url)
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "MANGA_NOT_FOUND"
    assert unreadable.status_code == 404
    assert unreadable.json()["error"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize("orientation", [3, 6, 8])
def test_a_cover_stored_sideways_makes_an_upright_thumbnail(orientation: int) -> None:
    """The thumbnail is re-encoded without EXIF, so the orientation is applied to its pixels."""
    shown = Image.open(io.BytesIO(thumbnails.thumbnail(oriented_jpeg(orientation), width=30)))
    assert_shows_marked(shown, width=30)
