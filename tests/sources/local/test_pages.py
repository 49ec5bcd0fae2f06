"""The page, cover and icon routes: streaming, Range, caching headers, signing, containment."""

import time
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.helpers.local_sources import SECRET, SourceFactory, client_for
from toshokan.core.signing import sign
from toshokan.sdk import RequestContext
from toshokan.sources.local import LocalLibrary
from toshokan.sources.local.pages import parse_range

from .helpers import cbz, jpeg, png

pytestmark = pytest.mark.anyio
CTX = RequestContext(base_url="http://testserver")


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + ("?" + parts.query if parts.query else "")


async def first_page(source: LocalLibrary, manga: str, chapter: str) -> str:
    return (await source.pages(manga, chapter, CTX))[0]


async def test_page_is_the_archive_entry(demo_source: LocalLibrary, demo_root: Path) -> None:
    url = await first_page(demo_source, "iron-garden", "ch-1-gearworks")
    with zipfile.ZipFile(
        demo_root / "Iron Garden" / "Iron Garden Ch.001 [Gearworks].cbz"
    ) as archive:
        expected = archive.read("001.jpg")
    async with client_for(demo_source) as client:
        response = await client.get(path_of(url))
    assert response.status_code == 200
    assert response.content == expected
    assert response.headers["content-type"] == "image/jpeg"
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert response.headers["accept-ranges"] == "bytes"
    assert response.headers["etag"].startswith('"')
    assert response.headers["last-modified"].endswith("GMT")


@pytest.mark.parametrize(
    ("manga", "chapter"),
    [("clockwork-sea", "ch-1-tidewatch"), ("paper-cranes", "ch-2-fold-scans")],
)
async def test_7z_and_folder_pages(demo_source: LocalLibrary, manga: str, chapter: str) -> None:
    urls = await demo_source.pages(manga, chapter, CTX)
    async with client_for(demo_source) as client:
        for url in urls:
            response = await client.get(path_of(url))
            assert response.status_code == 200
            assert response.content[:3] == b"\xff\xd8\xff"


async def test_range_requests(demo_source: LocalLibrary) -> None:
    url = path_of(await first_page(demo_source, "hoshi-no-tabibito", "ch-2-starlight-scans"))
    async with client_for(demo_source) as client:
        whole = (await client.get(url)).content
        size = len(whole)
        part = await client.get(url, headers={"Range": "bytes=10-19"})
        assert part.status_code == 206
        assert part.content == whole[10:20]
        assert part.headers["content-range"] == f"bytes 10-19/{size}"
        assert part.headers["content-length"] == "10"
        tail = await client.get(url, headers={"Range": "bytes=-5"})
        assert tail.status_code == 206 and tail.content == whole[-5:]
        open_end = await client.get(url, headers={"Range": f"bytes={size - 3}-"})
        assert open_end.content == whole[-3:]
        beyond = await client.get(url, headers={"Range": f"bytes={size}-{size + 10}"})
        assert beyond.status_code == 416
        assert beyond.headers["content-range"] == f"bytes */{size}"
        assert beyond.json()["error"]["code"] == "INVALID_REQUEST"
        multi = await client.get(url, headers={"Range": "bytes=0-1,5-6"})
        assert multi.status_code == 200 and multi.content == whole
        stale = await client.get(url, headers={"Range": "bytes=0-1", "If-Range": '"other"'})
        assert stale.status_code == 200


def test_parse_range_edge_cases() -> None:
    assert parse_range("bytes=0-0", 10) == (0, 0)
    assert parse_range("bytes=5-100", 10) == (5, 9)
    assert parse_range("bytes=-100", 10) == (0, 9)
    assert parse_range("items=0-1", 10) is None
    assert parse_range("bytes=a-b", 10) is None
    assert parse_range("bytes=5-2", 10) is None
    # Digits other than ASCII's are not numbers in HTTP.
    assert parse_range("bytes=\u00b2-", 10) is None
    assert parse_range("bytes=0-\u0663", 10) is None
    assert parse_range("bytes=-\uff11", 10) is None


async def test_conditional_requests(demo_source: LocalLibrary) -> None:
    url = path_of(await first_page(demo_source, "hoshi-no-tabibito", "ch-1-starlight-scans"))
    async with client_for(demo_source) as client:
        first = await client.get(url)
        etag = first.headers["etag"]
        again = await client.get(url, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["etag"] == etag
        weak = await client.get(url, headers={"If-None-Match": f'"x", W/{etag}'})
        assert weak.status_code == 304
        since = await client.get(url, headers={"If-Modified-Since": first.headers["last-modified"]})
        assert since.status_code == 304
        changed = await client.get(url, headers={"If-None-Match": '"different"'})
        assert changed.status_code == 200


async def test_large_pages_are_streamed(tmp_path: Path, make_source: SourceFactory) -> None:
    big = jpeg(size=(2200, 2200)) + b"\x00" * (3 * 1024 * 1024)
    cbz(tmp_path / "lib" / "Big" / "Ch.1.cbz", pages={"1.jpg": big, "2.png": png()})
    source = await make_source(tmp_path / "lib")
    urls = await source.pages("big", "ch-1", CTX)
    async with client_for(source) as client:
        whole = await client.get(path_of(urls[0]))
        assert whole.status_code == 200 and whole.content == big
        part = await client.get(path_of(urls[0]), headers={"Range": "bytes=3000000-3000099"})
        assert part.status_code == 206 and part.content == big[3000000:3000100]
        small = await client.get(path_of(urls[1]))
        assert small.headers["content-type"] == "image/png"


async def test_mislabelled_page_gets_its_real_type(
    tmp_path: Path, make_source: SourceFactory
) -> None:
    cbz(tmp_path / "lib" / "S" / "Ch.1.cbz", pages={"1.jpg": png()})
    source = await make_source(tmp_path / "lib")
    async with client_for(source) as client:
        response = await client.get(path_of(await first_page(source, "s", "ch-1")))
    assert response.headers["content-type"] == "image/png"


async def test_covers_and_icon(demo_source: LocalLibrary) -> None:
    manga = await demo_source.manga("clockwork-sea", CTX)
    fallback = await demo_source.manga("iron-garden", CTX)
    async with client_for(demo_source) as client:
        for url in (manga.covers[0], fallback.covers[0]):
            response = await client.get(path_of(url))
            assert response.status_code == 200 and response.headers["content-type"] == "image/jpeg"
        icon = await client.get("/_/local/icon.png")
        assert icon.status_code == 200 and icon.content.startswith(b"\x89PNG")
        missing = await client.get("/_/local/covers/no-such-series")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "MANGA_NOT_FOUND"


@pytest.mark.parametrize(
    "path",
    [
        "/_/local/pages/iron-garden/ch-1-gearworks/0",
        "/_/local/pages/iron-garden/ch-1-gearworks/4",
        "/_/local/pages/iron-garden/ch-1-gearworks/abc",
        "/_/local/pages/iron-garden/ch-1-gearworks/-1",
        "/_/local/pages/iron-garden/..%2F..%2Fetc/1",
        "/_/local/pages/..%2F..%2F/ch-1/1",
        "/_/local/pages/iron-garden/ch-99/1",
        "/_/local/pages/Iron-Garden/ch-1-gearworks/1",
        "/_/local/pages/iron-garden/ch-1-gearworks/99999999999999",
        "/_/local/pages/iron-garden/ch-1-gearworks/%C2%B2",
        "/_/local/pages/iron-garden/ch-1-gearworks/%D9%A1",
        "/_/local/covers/..%2F..",
        "/_/local/pages/../../../etc/passwd",
    ],
)
async def test_bad_page_paths_are_not_found(demo_source: LocalLibrary, path: str) -> None:
    async with client_for(demo_source) as client:
        response = await client.get(path)
    assert response.status_code == 404
    if response.headers.get("content-type") == "application/json":
        assert response.json()["error"]["code"] in (
            "NOT_FOUND",
            "SOURCE_NOT_FOUND",  # a client that resolves dot segments asks for /etc/passwd
            "CHAPTER_NOT_FOUND",
            "MANGA_NOT_FOUND",
        )


async def test_never_serves_outside_root_even_if_index_says_so(demo_source: LocalLibrary) -> None:
    # Simulate a tampered index row pointing outside the library.
    index = demo_source._require_index()
    with index.writer() as db:
        db.execute("UPDATE chapters SET relpath = '../../../etc' WHERE slug = 'ch-1-fold-scans'")
        db.execute(
            "UPDATE series SET cover_relpath = '../outside.jpg', cover_kind = 'file' "
            "WHERE slug = 'paper-cranes'"
        )
    async with client_for(demo_source) as client:
        page = await client.get("/_/local/pages/paper-cranes/ch-1-fold-scans/1")
        cover = await client.get("/_/local/covers/paper-cranes")
    assert page.status_code == 404 and cover.status_code == 404


async def test_vanished_file_is_not_found(demo_source: LocalLibrary, demo_root: Path) -> None:
    url = path_of(await first_page(demo_source, "iron-garden", "ch-2-gearworks"))
    (demo_root / "Iron Garden" / "Iron Garden Ch.002 [Gearworks].cbz").unlink()
    async with client_for(demo_source) as client:
        response = await client.get(url)
    assert response.status_code == 404


# -- signed URLs when auth is required ------------------------------------------------


@pytest.fixture
async def locked(make_source: SourceFactory, demo_root: Path) -> LocalLibrary:
    return await make_source(demo_root, auth="api_key", api_key="secret-key")


async def test_signed_urls(locked: LocalLibrary) -> None:
    url = await first_page(locked, "iron-garden", "ch-1-gearworks")
    assert "exp=" in url and "sig=" in url
    manga = await locked.manga("iron-garden", CTX)
    async with client_for(locked) as client:
        ok = await client.get(path_of(url))
        assert ok.status_code == 200
        assert ok.headers["cache-control"].startswith("private, max-age=")
        cover = await client.get(path_of(manga.covers[0]))
        assert cover.status_code == 200

        bare = await client.get(urlsplit(url).path)
        assert bare.status_code == 401 and bare.json()["error"]["code"] == "INVALID_CREDENTIALS"
        with_key = await client.get(urlsplit(url).path, headers={"X-API-Key": "secret-key"})
        assert with_key.status_code == 200
        wrong_key = await client.get(urlsplit(url).path, headers={"X-API-Key": "nope"})
        assert wrong_key.status_code == 401

        tampered = path_of(url).replace("sig=", "sig=0")
        assert (await client.get(tampered)).status_code == 401
        other_page = path_of(url).replace("/ch-1-gearworks/1?", "/ch-1-gearworks/2?")
        assert (await client.get(other_page)).status_code == 401
        expires = int(time.time()) - 5
        path = "/_/local/pages/iron-garden/ch-1-gearworks/1"
        expired = f"{path}?exp={expires}&sig={sign(SECRET, path, expires)}"
        response = await client.get(expired)
        assert response.status_code == 401 and "expired" in response.json()["error"]["message"]
        garbage = await client.get(f"{path}?exp=soon&sig=x")
        assert garbage.status_code == 401


async def test_signed_url_expiry_matches_ttl(locked: LocalLibrary) -> None:
    url = await first_page(locked, "iron-garden", "ch-1-gearworks")
    expires = int(dict(p.split("=") for p in urlsplit(url).query.split("&"))["exp"])
    assert time.time() + 3600 <= expires <= time.time() + 3600 + 61  # [host] link_ttl


async def test_unsigned_source_ignores_signatures(demo_source: LocalLibrary) -> None:
    url = await first_page(demo_source, "iron-garden", "ch-1-gearworks")
    async with client_for(demo_source) as client:
        response = await client.get(urlsplit(url).path + "?exp=1&sig=bad")
    assert response.status_code == 200


async def test_head_request(demo_source: LocalLibrary) -> None:
    url = path_of(await first_page(demo_source, "iron-garden", "ch-1-gearworks"))
    async with client_for(demo_source) as client:
        response = await client.request("HEAD", url)
    assert response.status_code == 200
    assert int(response.headers["content-length"]) > 0


async def test_forged_signatures_count_as_failed_attempts(locked: LocalLibrary) -> None:
    url = path_of(await first_page(locked, "iron-garden", "ch-1-gearworks"))
    path = "/_/local/pages/iron-garden/ch-1-gearworks/1"
    async with client_for(locked) as client:
        # A genuine link that expired is a stale page list, not a guess: never counted.
        for _ in range(15):
            expires = int(time.time()) - 5
            stale = await client.get(f"{path}?exp={expires}&sig={sign(SECRET, path, expires)}")
            assert stale.status_code == 401
        assert (await client.get(url)).status_code == 200
        forged = [await client.get(f"{path}?exp=9999999999&sig={n:040x}") for n in range(12)]
        genuine = await client.get(url)
    assert [r.status_code for r in forged[:10]] == [401] * 10
    assert forged[-1].status_code == 429 and "retry-after" in forged[-1].headers
    assert genuine.status_code == 429  # the guesser is stopped, good link or not
