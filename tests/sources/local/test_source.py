"""The source as the host sees it: details, chapters, pages, errors, auth and ping."""

import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.local_sources import SourceFactory, client_for, services
from toshokan.errors import ChapterNotFound, MangaNotFound
from toshokan.models import AuthType, Chapter
from toshokan.registry import adapter
from toshokan.sdk import Credentials, RequestContext, Source
from toshokan.sources.local import LocalLibrary, LocalSettings
from toshokan.sources.local.credentials import SecretConfigError, check_hash, hash_secret

from .helpers import cbz

pytestmark = pytest.mark.anyio
CTX = RequestContext(base_url="http://testserver")


def test_entry_point_and_settings() -> None:
    cls = adapter("local")
    assert cls is LocalLibrary and issubclass(cls, Source)
    assert cls.Settings is LocalSettings
    with pytest.raises(ValueError):
        LocalSettings.model_validate({"root": "/x", "unknown": 1})
    for name, field in LocalSettings.model_fields.items():
        assert field.description, name
    assert [c.name for c in LocalLibrary.commands()] == ["scan", "demo", "hash-secret"]


async def test_manga_details(demo_source: LocalLibrary) -> None:
    manga = await demo_source.manga("hoshi-no-tabibito", CTX)
    assert manga.title == "Hoshi no Tabibito"
    assert manga.authors == ["Aoi Minato", "Ren Kusakabe"]
    assert manga.tags == ["adventure", "fantasy", "space", "found-family"]
    assert manga.publication.value == "Ongoing" and manga.classification.value == "Safe"
    assert manga.synopsis.startswith("A courier")
    assert (
        manga.covers == [manga.covers[0]] and "/_/local/covers/hoshi-no-tabibito" in manga.covers[0]
    )
    assert manga.url == "http://testserver/local/hoshi-no-tabibito"
    assert manga.createdAt <= manga.updatedAt


async def test_chapters_newest_first_with_versions(demo_source: LocalLibrary) -> None:
    chapters = await demo_source.chapters("iron-garden", CTX)
    keys = [(c.date, c.number) for c in chapters]
    assert keys == sorted(keys, reverse=True)
    first = [c for c in chapters if c.number == 1]
    assert {(c.scanlator, c.language) for c in first} == {
        ("Gearworks", "en"),
        ("Night Shift", "en"),
        ("Jardin Scans", "es"),
    }
    assert len({c.slug for c in chapters}) == len(chapters)
    for chapter in chapters:
        Chapter.model_validate(chapter.model_dump())


async def test_decimal_chapters_and_oneshot(demo_source: LocalLibrary) -> None:
    numbers = [c.number for c in await demo_source.chapters("half-moon-diaries", CTX)]
    assert numbers == [2.5, 2, 1.5, 1]
    oneshot = await demo_source.chapters("the-quiet-lantern", CTX)
    assert [(c.number, c.slug, c.title) for c in oneshot] == [
        (0, "oneshot-lantern-works", "Oneshot")
    ]


async def test_pages(demo_source: LocalLibrary) -> None:
    pages = await demo_source.pages("clockwork-sea", "ch-1-tidewatch", CTX)
    assert len(pages) == 3
    assert all(
        p.startswith("http://testserver/_/local/pages/clockwork-sea/ch-1-tidewatch/") for p in pages
    )


@pytest.mark.parametrize(
    "bad", ["../etc", "search", "UPPER", "a/b", "%2e%2e", "a b", "", "x" * 300, "nope"]
)
async def test_unknown_or_malformed_slugs_are_not_found(
    demo_source: LocalLibrary, bad: str
) -> None:
    with pytest.raises(MangaNotFound):
        await demo_source.manga(bad, CTX)
    with pytest.raises(MangaNotFound):
        await demo_source.chapters(bad, CTX)
    with pytest.raises((MangaNotFound, ChapterNotFound)):
        await demo_source.pages(bad, "ch-1", CTX)
    with pytest.raises(ChapterNotFound):
        await demo_source.pages("iron-garden", bad, CTX)


async def test_ping(demo_source: LocalLibrary, demo_root: Path) -> None:
    await demo_source.ping()
    shutil.rmtree(demo_root)
    with pytest.raises(Exception, match="missing or unreadable"):
        await demo_source.ping()


async def test_ping_fails_when_index_unreadable(demo_source: LocalLibrary) -> None:
    demo_source._require_index().close()
    demo_source.index_path.unlink()
    demo_source.index_path.mkdir()
    with pytest.raises(Exception):  # noqa: B017 - whatever sqlite says, ping must fail
        await demo_source.ping()


async def test_missing_root_is_refused(tmp_path: Path, make_source: SourceFactory) -> None:
    # Serving a vanished library would answer from a stale index, every image failing.
    with pytest.raises(ValueError, match="missing does not exist or is not a folder"):
        await make_source(tmp_path / "missing")


async def test_root_vanishing_while_serving_pings_down(
    demo_root: Path, make_source: SourceFactory
) -> None:
    source = await make_source(demo_root)
    shutil.rmtree(demo_root)
    with pytest.raises(Exception, match="missing or unreadable"):
        await source.ping()


# -- authentication ---------------------------------------------------------------


async def test_no_auth_by_default(demo_source: LocalLibrary) -> None:
    config = demo_source.configuration()
    assert config.auth.type is AuthType.NONE and not config.auth.required


async def test_basic_auth(tmp_path: Path, make_source: SourceFactory, demo_root: Path) -> None:
    source = await make_source(demo_root, auth="basic", username="reader", password="open sesame")
    config = source.configuration()
    assert config.auth.type is AuthType.BASIC and config.auth.required
    assert config.auth.fields == ["username", "password"]
    good = Credentials(type=AuthType.BASIC, username="reader", password="open sesame")
    assert await source.verify_credentials(good)
    assert await source.verify_credentials(good)  # cached the second time
    assert not await source.verify_credentials(
        Credentials(type=AuthType.BASIC, username="reader", password="wrong")
    )
    assert not await source.verify_credentials(
        Credentials(type=AuthType.BASIC, username="other", password="open sesame")
    )
    assert not await source.verify_credentials(
        Credentials(type=AuthType.API_KEY, apiKey="open sesame")
    )
    headers = await source.authenticate(good)
    assert headers["Authorization"].startswith("Basic ")
    assert "open sesame" not in repr(source.settings)


async def test_api_key_from_hash_and_environment(
    tmp_path: Path, make_source: SourceFactory, demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoded = hash_secret("k3y")
    assert check_hash("k3y", encoded) and not check_hash("nope", encoded)
    source = await make_source(demo_root, auth="api_key", api_key_hash=encoded)
    assert await source.verify_credentials(Credentials(type=AuthType.API_KEY, apiKey="k3y"))
    assert not await source.verify_credentials(Credentials(type=AuthType.API_KEY, apiKey="k3y "))

    monkeypatch.setenv("TOSHOKAN_SHELF_API_KEY", "from-env")
    env_source = await make_source(demo_root, slug="shelf", auth="api_key")
    assert await env_source.verify_credentials(
        Credentials(type=AuthType.API_KEY, apiKey="from-env")
    )
    assert env_source.configuration().auth.type is AuthType.API_KEY


def test_pbkdf2_hashes_are_accepted() -> None:
    import base64
    import hashlib

    salt = b"saltsalt"
    digest = hashlib.pbkdf2_hmac("sha256", b"pw", salt, 1000)
    encoded = "pbkdf2_sha256$1000${}${}".format(
        base64.urlsafe_b64encode(salt).decode().rstrip("="),
        base64.urlsafe_b64encode(digest).decode().rstrip("="),
    )
    assert check_hash("pw", encoded) and not check_hash("px", encoded)
    assert not check_hash("pw", "garbage$1$2")


def test_misconfigured_auth_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SecretConfigError, match="password"):
        LocalLibrary(
            "local", LocalSettings(root=tmp_path, auth="basic", username="u"), services(tmp_path)
        )
    with pytest.raises(SecretConfigError, match="username"):
        LocalLibrary(
            "local", LocalSettings(root=tmp_path, auth="basic", password="p"), services(tmp_path)
        )
    with pytest.raises(SecretConfigError, match="api_key_hash"):
        LocalLibrary(
            "local",
            LocalSettings(root=tmp_path, auth="api_key", api_key_hash="plain"),
            services(tmp_path),
        )


async def test_copied_library_lists_chapters_by_number(
    tmp_path: Path, make_source: SourceFactory
) -> None:
    import os

    root = tmp_path / "lib"
    numbers = ["1", "2", "3", "9", "9.5", "10", "11", "12"]
    # A plain copy leaves modification times in no useful order.
    shuffled = [5, 1, 7, 3, 8, 2, 6, 4]
    for number, stamp in zip(numbers, shuffled, strict=True):
        path = root / "Series" / f"Ch.{number}.cbz"
        cbz(path, pages=1)
        os.utime(path, (1_600_000_000 + stamp * 1000,) * 2)
    source = await make_source(root)
    chapters = await source.chapters("series", CTX)
    assert [c.number for c in chapters] == [12, 11, 10, 9.5, 9, 3, 2, 1]
    cbz(root / "Series" / "Ch.4.cbz", pages=1)  # found late: on top, whatever its number
    await source.rescan()
    chapters = await source.chapters("series", CTX)
    assert [c.number for c in chapters][:2] == [4, 12]
    assert chapters[0].date > chapters[1].date


async def test_absurd_file_times_do_not_break_a_series(
    tmp_path: Path, make_source: SourceFactory
) -> None:
    import os

    root = tmp_path / "lib"
    for name, stamp in (("Ch.1.cbz", 1e12), ("Ch.2.cbz", -1e10)):
        path = root / "Series" / name
        cbz(path, pages=1)
        try:
            os.utime(path, (stamp, stamp))
        except (OSError, OverflowError):
            pytest.skip("this file system cannot store such times")
    source = await make_source(root)
    manga = await source.manga("series", CTX)
    assert manga.createdAt.year >= 2000
    chapters = await source.chapters("series", CTX)
    assert [c.number for c in chapters] == [2, 1]
    async with client_for(source) as client:
        for url in await source.pages("series", chapters[0].slug, CTX):
            response = await client.get(url.removeprefix("http://testserver"))
            assert response.status_code == 200
            assert response.headers["last-modified"].endswith("GMT")


async def test_new_chapters_show_at_once_through_the_host_cache(
    tmp_path: Path, make_source: SourceFactory
) -> None:
    root = tmp_path / "lib"
    cbz(root / "Series" / "Ch.1.cbz", pages=1)
    source = await make_source(root)
    async with client_for(source) as client:
        first = await client.get("/local/series/chapters")
        assert [c["number"] for c in first.json()] == [1]
        search = await client.post(
            "/local/search", json={"page": 1, "query": "Newcomer", "sort": "title"}
        )
        assert search.json()["results"] == []
        cbz(root / "Series" / "Ch.2.cbz", pages=1)
        cbz(root / "Newcomer" / "Ch.1.cbz", pages=1)
        await source.rescan()
        again = await client.get("/local/series/chapters")
        assert [c["number"] for c in again.json()] == [2, 1]
        assert again.headers.get("etag") != first.headers.get("etag")
        search = await client.post(
            "/local/search", json={"page": 1, "query": "Newcomer", "sort": "title"}
        )
        assert [r["slug"] for r in search.json()["results"]] == ["newcomer"]


def hold_series(monkeypatch: pytest.MonkeyPatch, prefix: str) -> threading.Event:
    """Hold the scan before it reads a chapter whose path starts with ``prefix``, until the
    returned event is set (at most 30 s), so the host can be seen in the middle of a scan."""
    from toshokan.sources.local.scanner import Scanner

    gate = threading.Event()
    read = Scanner.read_chapter

    def slow_read(self: Scanner, chapter: Any) -> Any:
        if chapter.relpath.startswith(prefix):
            gate.wait(30)
        return read(self, chapter)

    monkeypatch.setattr(Scanner, "read_chapter", slow_read)
    return gate


async def test_host_answers_while_the_first_scan_runs(
    tmp_path: Path, make_source: SourceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from toshokan.sources.local.index import update as index_update

    monkeypatch.setattr(index_update, "BATCH", 1)
    monkeypatch.setattr(index_update, "FLUSH_SECONDS", 0.0)
    root = tmp_path / "lib"
    cbz(root / "Alpha" / "Ch.1.cbz", pages=1)
    cbz(root / "Beta" / "Ch.1.cbz", pages=1)
    gate = hold_series(monkeypatch, "Beta")
    source = await make_source(root, start_wait=0)
    async with client_for(source) as client:
        assert (await client.get("/local/health")).status_code == 200
        found: list[str] = []
        for _ in range(100):  # Alpha is committed while Beta is still being read
            response = await client.post(
                "/local/search", json={"page": 1, "sort": "title", "direction": "asc"}
            )
            found = [r["slug"] for r in response.json()["results"]]
            if found:
                break
            await asyncio.sleep(0.1)
        assert found == ["alpha"]
        health = (await client.get("/local/health")).json()
        assert health["status"] == "ok" and health["detail"].startswith("scanning: ")
        ping = (await client.get("/local/ping")).json()
        assert ping["status"] == "ok" and ping["detail"].startswith("scanning: ")
        gate.set()
        assert source._first_scan is not None
        await source._first_scan
        response = await client.post(
            "/local/search", json={"page": 1, "sort": "title", "direction": "asc"}
        )
        assert [r["slug"] for r in response.json()["results"]] == ["alpha", "beta"]
        assert (await client.get("/local/health")).json() == {"status": "ok"}
        assert "detail" not in (await client.get("/local/ping")).json()


async def test_a_new_library_shows_its_first_series_after_a_hundred_chapters(
    tmp_path: Path, make_source: SourceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first commit does not wait for a full batch or a second: readers see series at once."""
    import asyncio

    root = tmp_path / "lib"
    for series in ("Alpha", "Beta", "Gamma", "Delta", "Omega"):
        for number in range(1, 26):
            cbz(root / series / f"Ch.{number}.cbz", pages=1)
    gate = hold_series(monkeypatch, "Omega")
    source = await make_source(root, start_wait=0)
    found: list[str] = []
    async with client_for(source) as client:
        try:
            for _ in range(50):  # four series (100 chapters) are read while Omega's reading waits
                response = await client.post(
                    "/local/search", json={"page": 1, "sort": "title", "direction": "asc"}
                )
                found = [r["slug"] for r in response.json()["results"]]
                if found:
                    break
                await asyncio.sleep(0.1)
        finally:
            gate.set()
        assert source._first_scan is not None
        await source._first_scan
    assert found == ["alpha", "beta", "delta", "gamma"]


async def test_names_real_libraries_use(tmp_path: Path, make_source: SourceFactory) -> None:
    root = tmp_path / "lib"
    for name in (
        "One Piece - c1000 (v97) [Digital] [1r0n].cbz",
        "One Piece - Chapter 1003 - Kaido.cbz",
        "One Piece - Chapter 1003 (es).cbz",
        "Asura Scans_Chapter 11",
        # Mihon/Tachiyomi chapter folders: ``<scanlator>_<chapter name>``, a colon written ``_``.
        "Asura Scans_Ch. 13",
        "Lector Scans_Capítulo 14",
        "Asura Scans_Chapter 15_ The Return",
    ):
        if name.endswith(".cbz"):
            cbz(root / "One Piece" / name, pages=1)
        else:
            (root / "One Piece" / name).mkdir(parents=True)
            (root / "One Piece" / name / "001.jpg").write_bytes(b"\xff\xd8\xff\xe0" + b"0" * 64)
    cbz(root / "進撃の巨人" / "第01話.cbz", pages=1)
    source = await make_source(root)
    chapters = {(c.number, c.language): c for c in await source.chapters("one-piece", CTX)}
    assert chapters[(1000, "en")].scanlator == "1r0n"
    assert chapters[(1003, "en")].title == "Kaido"
    assert chapters[(1003, "es")].scanlator != "es"
    assert chapters[(11, "en")].scanlator == "Asura Scans"
    assert chapters[(13, "en")].scanlator == "Asura Scans"
    assert chapters[(14, "en")].scanlator == "Lector Scans"
    assert (chapters[(15, "en")].scanlator, chapters[(15, "en")].title) == (
        "Asura Scans",
        "The Return",
    )
    [first] = await source.chapters("jin-ji-no-ju-ren", CTX)
    assert first.number == 1


async def test_shutdown_stops_a_running_scan(
    tmp_path: Path, make_source: SourceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from toshokan.sources.local.scanner import Scanner

    root = tmp_path / "lib"
    for n in range(1, 101):
        cbz(root / "Series" / f"Ch.{n}.cbz", pages=1)
    read = Scanner.read_chapter
    opened: list[Any] = []

    def slow_read(self: Scanner, chapter: Any) -> Any:
        time.sleep(0.05)  # 100 chapters: five seconds
        opened.append(chapter)
        return read(self, chapter)

    monkeypatch.setattr(Scanner, "read_chapter", slow_read)
    source = await make_source(root, start_wait=0)
    started = time.monotonic()
    await source.shutdown()
    assert time.monotonic() - started < 2
    assert len(opened) < 100
