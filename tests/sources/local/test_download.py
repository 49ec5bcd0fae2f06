"""A chapter's archive offered whole: the download route, its headers, ranges and guard."""

import io
import os
import zipfile
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

from tests.helpers.local_sources import SourceFactory, client_for
from toshokan.sdk import RequestContext
from toshokan.sources.local import LocalLibrary
from toshokan.sources.local.pages import archive_media_type, content_disposition, scanned_size

from .helpers import cbz, epub, jpeg, pdf

pytestmark = pytest.mark.anyio
CTX = RequestContext(base_url="http://testserver")
IRON = Path("Iron Garden") / "Iron Garden Ch.001 [Gearworks].cbz"


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + ("?" + parts.query if parts.query else "")


async def test_the_download_is_the_archive_byte_for_byte(
    demo_source: LocalLibrary, demo_root: Path
) -> None:
    download = await demo_source.download("iron-garden", "ch-1-gearworks", CTX)
    assert download is not None
    assert download.media_type == "application/vnd.comicbook+zip"
    assert download.size == (demo_root / IRON).stat().st_size
    async with client_for(demo_source) as client:
        response = await client.get(path_of(download.url))
    assert response.status_code == 200
    assert response.content == (demo_root / IRON).read_bytes()
    assert response.headers["content-type"] == "application/vnd.comicbook+zip"
    assert response.headers["content-disposition"] == (
        'attachment; filename="Iron Garden Ch.001 [Gearworks].cbz"; '
        "filename*=UTF-8''Iron%20Garden%20Ch.001%20%5BGearworks%5D.cbz"
    )
    assert response.headers["accept-ranges"] == "bytes"
    assert response.headers["content-length"] == str((demo_root / IRON).stat().st_size)


async def test_a_cb7_chapter_is_offered_with_its_type(
    demo_source: LocalLibrary, demo_root: Path
) -> None:
    chapters = await demo_source.chapters("clockwork-sea", CTX)
    offered = {c.slug: await demo_source.download("clockwork-sea", c.slug, CTX) for c in chapters}
    types = sorted(d.media_type for d in offered.values() if d is not None)
    assert types == ["application/vnd.comicbook+zip"] * 3 + ["application/x-cb7"]
    cb7 = next(d for d in offered.values() if d and d.media_type == "application/x-cb7")
    async with client_for(demo_source) as client:
        response = await client.get(path_of(cb7.url))
    assert response.content == next((demo_root / "Clockwork Sea").glob("*.cb7")).read_bytes()
    assert response.headers["content-type"] == "application/x-cb7"


async def test_a_folder_of_images_downloads_as_a_cbz_of_its_pages(
    demo_source: LocalLibrary, demo_root: Path
) -> None:
    """Stored entries named in reading order, the same bytes on every request, its length
    told up front; a page that now points outside the library stops the download."""
    chapter = min(await demo_source.chapters("paper-cranes", CTX), key=lambda c: c.number)
    download = await demo_source.download("paper-cranes", chapter.slug, CTX)
    assert download is not None and download.media_type == "application/vnd.comicbook+zip"
    async with client_for(demo_source) as client:
        first = await client.get(path_of(download.url))
        again = await client.get(path_of(download.url))
    assert first.status_code == 200 and first.content == again.content
    assert first.headers["content-length"] == str(len(first.content))
    assert first.headers["content-type"] == "application/vnd.comicbook+zip"
    assert first.headers["content-disposition"].startswith('attachment; filename="Chapter 01.cbz"')
    folder = demo_root / "Paper Cranes" / "Chapter 01"
    pages = sorted(folder.glob("*.jpg"))
    with zipfile.ZipFile(io.BytesIO(first.content)) as archive:
        members = archive.infolist()
        assert {m.compress_type for m in members} == {zipfile.ZIP_STORED}
        names = [f"{n}.jpg" for n in range(1, len(pages) + 1)]
        assert [m.filename for m in members] == [*names, "ComicInfo.xml"]
        assert [archive.read(name) for name in names] == [page.read_bytes() for page in pages]
        assert archive.read("ComicInfo.xml") == (folder / "ComicInfo.xml").read_bytes()
    outside = demo_root.parent / "elsewhere.jpg"
    outside.write_bytes(pages[0].read_bytes())
    pages[0].unlink()
    pages[0].symlink_to(outside)
    async with client_for(demo_source) as client:
        refused = await client.get(path_of(download.url))
    assert refused.status_code == 404


async def test_unknown_and_malformed_chapters_are_not_found(demo_source: LocalLibrary) -> None:
    async with client_for(demo_source) as client:
        for path in (
            "/_/local/download/iron-garden/ch-99",
            "/_/local/download/nowhere/ch-1-gearworks",
            "/_/local/download/Iron%20Garden/ch-1-gearworks",
            "/_/local/download/iron-garden/..%2F..%2Fetc",
        ):
            response = await client.get(path)
            assert response.status_code == 404, path
            assert response.json()["error"]["code"] in ("NOT_FOUND", "CHAPTER_NOT_FOUND")


async def test_ranges_and_revalidation(demo_source: LocalLibrary, demo_root: Path) -> None:
    whole = (demo_root / IRON).read_bytes()
    download = await demo_source.download("iron-garden", "ch-1-gearworks", CTX)
    assert download is not None
    async with client_for(demo_source) as client:
        url = path_of(download.url)
        part = await client.get(url, headers={"Range": "bytes=10-29"})
        assert part.status_code == 206
        assert part.content == whole[10:30]
        assert part.headers["content-range"] == f"bytes 10-29/{len(whole)}"
        tail = await client.get(url, headers={"Range": "bytes=-5"})
        assert tail.content == whole[-5:]
        past = await client.get(url, headers={"Range": f"bytes={len(whole)}-"})
        assert past.status_code == 416
        assert past.headers["content-range"] == f"bytes */{len(whole)}"
        first = await client.get(url)
        again = await client.get(url, headers={"If-None-Match": first.headers["etag"]})
        assert again.status_code == 304
        assert again.content == b""


async def test_a_large_archive_is_streamed_whole_and_in_part(
    make_source: SourceFactory, tmp_path: Path
) -> None:
    root = tmp_path / "big"
    noise = os.urandom(3 * 1024 * 1024)  # incompressible: the archive outgrows one read
    archive = cbz(root / "Big" / "Big Ch.001.cbz", {"1.jpg": jpeg(), "2.bin": noise})
    source = await make_source(root)
    chapters = await source.chapters("big", CTX)
    download = await source.download("big", chapters[0].slug, CTX)
    assert download is not None
    whole = archive.read_bytes()
    assert len(whole) > 3 * 1024 * 1024
    async with client_for(source) as client:
        response = await client.get(path_of(download.url))
        assert response.status_code == 200
        assert response.content == whole
        start = 2 * 1024 * 1024 + 7
        part = await client.get(path_of(download.url), headers={"Range": f"bytes={start}-"})
        assert part.status_code == 206
        assert part.content == whole[start:]


async def test_an_auth_required_library_guards_downloads_like_pages(
    make_source: SourceFactory, demo_root: Path
) -> None:
    source = await make_source(demo_root, auth="basic", username="reader", password="open sesame")
    download = await source.download("iron-garden", "ch-1-gearworks", CTX)
    assert download is not None
    signed = path_of(download.url)
    assert "sig=" in signed
    async with client_for(source) as client:
        response = await client.get(signed)
        assert response.status_code == 200
        assert response.content == (demo_root / IRON).read_bytes()
        assert response.headers["cache-control"].startswith("private")
        bare = urlsplit(download.url).path
        assert (await client.get(bare)).status_code == 401
        tampered = signed.replace("sig=", "sig=0")
        assert (await client.get(tampered)).status_code in (401, 403)
        named = await client.get(bare, auth=("reader", "open sesame"))
        assert named.status_code == 200
        assert named.content == response.content


def test_media_types_by_extension() -> None:
    assert archive_media_type("a/b.CBZ") == "application/vnd.comicbook+zip"
    assert archive_media_type("a/b.cbr") == "application/vnd.comicbook-rar"
    assert archive_media_type("a/b.cb7") == "application/x-cb7"
    assert archive_media_type("a/b.pdf") == "application/pdf"
    assert archive_media_type("a/Chapter 01") is None


def test_the_scanned_size_comes_from_an_archive_signature_only() -> None:
    assert scanned_size("1234:1700000000000000000") == 1234
    assert scanned_size("dir:0f3a") is None
    assert scanned_size("") is None


def test_content_disposition_keeps_any_name_safe() -> None:
    header = content_disposition('星の旅人 "1".cbz')
    assert header.startswith('attachment; filename="____ _1_.cbz"; ')
    assert header.endswith("filename*=UTF-8''" + quote('星の旅人 "1".cbz', safe=""))
    assert "\n" not in content_disposition("a\nb.cbz")


async def test_pdf_and_epub_chapters_download_as_themselves(
    make_source: SourceFactory, tmp_path: Path
) -> None:
    root = tmp_path / "lib"
    paper = pdf(root / "Paper Moon" / "Paper Moon - Chapter 1.pdf", [(300, 450, (255, 0, 0))])
    glass = epub(root / "Paper Moon" / "Paper Moon - Chapter 2.epub", [("p1.jpg", jpeg())])
    source = await make_source(root)
    chapters = {c.number: c.slug for c in await source.chapters("paper-moon", CTX)}
    async with client_for(source) as client:
        for number, file, media_type in (
            (1, paper, "application/pdf"),
            (2, glass, "application/epub+zip"),
        ):
            download = await source.download("paper-moon", chapters[number], CTX)
            assert download is not None and download.media_type == media_type
            response = await client.get(path_of(download.url))
            assert response.content == file.read_bytes()
            assert response.headers["content-type"] == media_type
