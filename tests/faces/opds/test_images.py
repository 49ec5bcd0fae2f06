"""The image pipeline: conversion, resizing, bounds, signed links, caching."""

import io
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from PIL import Image

from tests.sources.local.helpers import PAGE_SIZE, assert_shows_marked, marked, oriented_jpeg
from tests.sources.mangadex.image_servers import ImageServers, webp
from toshokan.core.images import (
    MAX_PIXELS,
    clamp_width,
    stable_key,
    transform,
)
from toshokan.errors import UpstreamError
from toshokan.sdk.archives import DiskCache
from toshokan.testing import ServedHost


def encoded(image: Image.Image, kind: str) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, kind)
    return buffer.getvalue()


def test_allowed_formats_pass_through_untouched() -> None:
    for kind, media in (("JPEG", "image/jpeg"), ("PNG", "image/png"), ("GIF", "image/gif")):
        data = encoded(Image.new("RGB", (40, 60), (1, 2, 3)), kind)
        picture, converted = transform(data, None)
        assert (picture.data, picture.media_type, converted) == (data, media, False)
    upright = oriented_jpeg(1)
    assert transform(upright, None, as_jpeg=True)[0].data == upright


def test_other_formats_become_jpeg() -> None:
    for kind in ("WEBP", "AVIF", "BMP", "TIFF"):
        picture, converted = transform(encoded(marked(), kind), None)
        assert converted and picture.media_type == "image/jpeg"
        assert_shows_marked(Image.open(io.BytesIO(picture.data)))


def test_pages_for_a_stream_link_become_the_jpeg_it_declares() -> None:
    for kind in ("PNG", "GIF", "WEBP", "AVIF", "BMP", "TIFF"):
        picture, converted = transform(encoded(marked(), kind), None, as_jpeg=True)
        assert converted and picture.media_type == "image/jpeg"
        shown = Image.open(io.BytesIO(picture.data))
        assert shown.format == "JPEG"
        assert_shows_marked(shown)


@pytest.mark.parametrize("orientation", range(1, 9))
@pytest.mark.parametrize("width", [None, 30])
def test_pages_are_upright_whatever_their_exif_orientation(
    orientation: int, width: int | None
) -> None:
    """PSE readers ignore EXIF: a phone photo or a scan stored sideways is answered upright."""
    picture, _ = transform(oriented_jpeg(orientation), width)
    shown = Image.open(io.BytesIO(picture.data))
    assert shown.format == "JPEG" and picture.media_type == "image/jpeg"
    assert shown.getexif().get(0x0112, 1) == 1
    assert_shows_marked(shown, width=width or PAGE_SIZE[0])


def test_transparency_lands_on_white_paper() -> None:
    data = encoded(Image.new("RGBA", (10, 10), (0, 0, 0, 0)), "WEBP")
    picture, _ = transform(data, None)
    assert Image.open(io.BytesIO(picture.data)).getpixel((5, 5)) >= (250, 250, 250)  # type: ignore[operator]


def test_resize_keeps_aspect_and_never_enlarges() -> None:
    data = encoded(Image.new("RGB", (1000, 1500)), "PNG")
    picture, _ = transform(data, 300)
    assert Image.open(io.BytesIO(picture.data)).size == (300, 450)
    small = encoded(Image.new("RGB", (200, 300)), "JPEG")
    assert transform(small, 300)[0].data == small
    narrow_png = encoded(Image.new("RGB", (200, 300)), "PNG")
    assert Image.open(io.BytesIO(transform(narrow_png, 300)[0].data)).size == (200, 300)


def test_decompression_bombs_are_refused_before_decoding() -> None:
    # A tiny PNG that claims more pixels than the host decodes.
    side = int(MAX_PIXELS**0.5) + 10
    bomb = encoded(Image.new("1", (side, side)), "PNG")
    assert len(bomb) < 2 * 1024 * 1024
    with pytest.raises(UpstreamError, match="million"):
        transform(bomb, None)


def test_garbage_is_an_upstream_error() -> None:
    with pytest.raises(UpstreamError):
        transform(b"<html>not an image</html>", None)


def test_widths_are_bounded_and_junk_means_full_size() -> None:
    assert clamp_width("800") == 800
    assert clamp_width("1") == 16
    assert clamp_width("999999") == 8192
    for junk in ("", "{maxWidth}", "-5", "1e3", "²", None):
        assert clamp_width(junk) is None


def test_resigned_links_share_a_cache_key() -> None:
    assert stable_key("http://h/_/x/pages/a/b/1?exp=1&sig=2") == "http://h/_/x/pages/a/b/1"
    assert stable_key("https://u/data/h/1.png?token=t") == "https://u/data/h/1.png?token=t"


def test_disk_cache_stays_under_its_cap(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path, max_bytes=10_000)
    for n in range(30):
        cache.put(f"{n:064x}", b"x" * 1000)
    total = sum(p.stat().st_size for p in tmp_path.glob("*/*.jpg"))
    assert total <= 10_000
    assert cache.get(f"{29:064x}") == b"x" * 1000


pytestmark = pytest.mark.anyio


async def test_signed_links_serve_any_image_without_headers(
    mangadex_host: ServedHost, image_servers: ImageServers
) -> None:
    pipeline = mangadex_host.core.images
    upstream = "https://abc123.fake-mangadex.network/data/hash/1.webp"
    url = pipeline.signed_url("http://testserver", "mangadex", upstream, width=100)
    answer = await mangadex_host.client.get(url)
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "image/jpeg"
    assert Image.open(io.BytesIO(answer.content)).width == 100
    assert image_servers.requests[-1].headers["referer"] == "https://mangadex.org/"


async def test_tampered_or_unsigned_links_are_refused(mangadex_host: ServedHost) -> None:
    pipeline = mangadex_host.core.images
    url = pipeline.signed_url(
        "http://testserver", "mangadex", "https://abc123.fake-mangadex.network/a.webp"
    )
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    client = mangadex_host.client
    elsewhere = {**query, "u": "http://169.254.169.254/latest/meta-data"}
    for changed in (elsewhere, {**query, "w": "50"}, {**query, "exp": "1"}, {"u": query["u"]}):
        answer = await client.get(f"{parts.path}?{urlencode(changed)}")
        assert answer.status_code == 401, changed
    assert (await client.get(url.replace("/mangadex?", "/nosuch?"))).status_code == 404


async def test_converted_images_come_from_disk_the_second_time(
    mangadex_host: ServedHost, image_servers: ImageServers, tmp_path: Path
) -> None:
    pipeline = mangadex_host.core.images
    pipeline.memory = type(pipeline.memory)(0, 0)  # nothing kept in memory
    url = pipeline.signed_url(
        "http://testserver", "mangadex", "https://abc123.fake-mangadex.network/b.webp"
    )
    first = await mangadex_host.client.get(url)
    second = await mangadex_host.client.get(url)
    assert first.content == second.content
    assert len([r for r in image_servers.requests if r.url.path == "/b.webp"]) == 1
    assert list((tmp_path / "data" / "image-cache").glob("*/*.jpg"))


async def test_oversized_upstream_images_are_refused(
    mangadex_host: ServedHost, image_servers: ImageServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("toshokan.core.images.pipeline.MAX_SOURCE_BYTES", 1000)
    image_servers.body = webp(2000, 2000, (5, 6, 7)) + b"\0" * 2000
    pipeline = mangadex_host.core.images
    url = pipeline.signed_url(
        "http://testserver", "mangadex", "https://abc123.fake-mangadex.network/c.webp"
    )
    answer = await mangadex_host.client.get(url)
    assert answer.status_code == 502
    assert "larger than" in answer.json()["error"]["message"]


async def test_one_upstream_host_gets_a_bounded_number_of_fetches() -> None:
    import asyncio

    from toshokan.core.images.sharing import UpstreamGates

    gates = UpstreamGates(per_key=2, max_keys=3)
    running, peak = 0, 0

    async def fetch(host: str) -> None:
        nonlocal running, peak
        async with gates.hold(host):
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0.01)
            running -= 1

    await asyncio.gather(*(fetch("at-home-1") for _ in range(6)))
    assert peak == 2
    for n in range(10):
        await fetch(f"at-home-{n}")
    assert len(gates._gates) <= 3
