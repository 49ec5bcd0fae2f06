"""Following in the web reader: a Follow button on a MangaDex series, a check finding the chapter
the fake MangaDex publishes, the Updates page listing it unread, and the reader opening it.

The browser fetches MangaDex's covers and pages from MangaDex's own servers, as the spec's
interface names them; here those are the fake's image servers, answered by the browser's
routing so that nothing leaves the machine.
"""

import asyncio
import re
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.browsing import DESKTOP, PHONE, listening, shot, wait_for_page_image
from tests.faces.kosync.koreader import KOReader, book_digest
from tests.helpers.serving import free_port
from tests.sources.local.helpers import cbz
from tests.sources.mangadex.fake import API, T0, UPLOADS, FakeMangaDex
from tests.sources.mangadex.image_servers import webp
from tests.sources.mangadex.sample import two_series
from toshokan.sources.local import LocalLibrary, write_demo_library
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import build_app

MIKA, PASSWORD = "mika", "hunter22 at sea"
#: MangaDex's image servers (covers, at-home nodes) as the fake names them.
IMAGE_HOSTS = re.compile(r"^https://[^/]*fake-mangadex\.(test|network)/")


@pytest.fixture
def fake() -> FakeMangaDex:
    return two_series()


@pytest.fixture
def mangadex_host(fake: FakeMangaDex, tmp_path: Path) -> Iterator[str]:
    """A host serving the fake MangaDex with one reader, its follows' rounds a second apart."""
    port = free_port()
    app = build_app(
        {"mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS))},
        upstream=fake.transport(),
        data_dir=tmp_path / "data",
        server={"host": "127.0.0.1", "port": port},
        limits={"rate_limit": 0, "image_rate_limit": 0},
        follows={"round": 1},
    )
    app.state.core.readers.readers.add(MIKA, PASSWORD)
    yield from listening(app, port)


def pirates(fake: FakeMangaDex) -> str:
    return next(m.id for m in fake.manga.values() if m.title["en"] == "Pirate Voyage")


def signed_in_page(browser: Any, base: str, size: dict[str, int]) -> tuple[Any, list[str]]:
    """A browser signed in as the reader, MangaDex's image servers answered locally; its page
    and the errors its console shows."""
    context = browser.new_context(viewport=size, base_url=base)
    picture = webp(600, 900)
    context.route(
        IMAGE_HOSTS,
        lambda route: route.fulfill(status=200, body=picture, content_type="image/webp"),
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(base + "/_/")
    page.get_by_label("Name").fill(MIKA)
    page.get_by_label("Password or API key").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#who")).to_contain_text(MIKA)
    return page, errors


def api(base: str, method: str, path: str, **options: Any) -> Any:
    answer = httpx.request(method, base + path, auth=(MIKA, PASSWORD), timeout=20, **options)
    assert answer.status_code < 300, answer.text
    return answer.json() if answer.content else None


def until_checked(base: str, manga: str, source: str = "mangadex") -> None:
    """The series' first check is recorded (what exists then is not new)."""
    deadline = time.monotonic() + 30
    while api(base, "GET", f"/_/follows/series/{source}/{manga}")["state"] != "ok":
        assert time.monotonic() < deadline, "the first check never ran"
        time.sleep(0.2)
    time.sleep(1.1)  # a series is checked on demand once a round at most


def test_follow_check_now_and_read_the_new_chapter(
    browser: Any, mangadex_host: str, fake: FakeMangaDex
) -> None:
    base, manga = mangadex_host, pirates(fake)
    page, errors = signed_in_page(browser, base, DESKTOP)
    page.goto(f"{base}/_/#/m/mangadex/{manga}")
    follow = page.get_by_role("button", name="Follow", exact=True)
    follow.click()
    expect(page.get_by_role("button", name="Unfollow")).to_be_visible()
    expect(page.locator(".follow-note")).to_contain_text("Followed")
    until_checked(base, manga)

    page.goto(f"{base}/_/#/updates")
    expect(page.locator(".updates")).to_contain_text("No new chapters yet")
    chapter = fake.add_chapter(
        fake.manga[manga], "4", title="Landfall", publish_at=T0 + timedelta(days=30)
    )
    page.get_by_role("button", name="Check now").click()
    expect(page.get_by_role("status").first).to_contain_text("1 new chapter")
    item = page.locator(".updates li.update").first
    expect(item).to_have_class(re.compile(r"\bunread\b"))
    expect(item).to_contain_text("Unread")
    expect(item).to_contain_text("Pirate Voyage")
    expect(item).to_contain_text("Landfall")
    expect(page.locator(".summary")).to_have_text("1 unread · 1 series followed")
    shot(page, "updates")

    page.get_by_role("link", name="Home").click()
    shelf = page.get_by_role("list", name="Following")
    expect(shelf).to_contain_text("Pirate Voyage")
    expect(shelf).to_contain_text("1 new")
    expect(shelf.locator("img.art")).to_be_visible()  # its cover, asked of MangaDex
    shot(page, "home-following")

    page.get_by_role("link", name=re.compile("Updates: 1 unread")).click()
    page.locator(".updates li.update a.chapter").first.click()
    expect(page).to_have_url(re.compile(rf"#/r/mangadex/{manga}/{chapter.id}$"))
    wait_for_page_image(page)
    page.keyboard.press("End")  # to the last page: the chapter is read
    expect(page.locator(".reader-bar .where .counter")).to_have_text(re.compile(r"of 3$"))
    deadline = time.monotonic() + 10
    while api(base, "GET", "/_/follows/updates?unread=1")["updates"]:
        assert time.monotonic() < deadline, "reading to the end did not mark the chapter read"
        time.sleep(0.2)

    page.goto(f"{base}/_/#/updates")
    item = page.locator(".updates li.update").first
    expect(item).to_contain_text("Landfall")
    expect(item).not_to_have_class(re.compile(r"\bunread\b"))
    expect(page.locator(".summary")).to_have_text("0 unread · 1 series followed")
    assert errors == []


def test_on_a_phone_mark_all_read_and_unfollow(
    browser: Any, mangadex_host: str, fake: FakeMangaDex
) -> None:
    base, manga = mangadex_host, pirates(fake)
    api(base, "PUT", f"/_/follows/series/mangadex/{manga}")
    until_checked(base, manga)
    for number, day in (("4", 30), ("5", 31)):
        fake.add_chapter(fake.manga[manga], number, publish_at=T0 + timedelta(days=day))
    page, errors = signed_in_page(browser, base, PHONE)
    page.goto(f"{base}/_/#/updates")
    page.get_by_role("button", name="Check now").click()
    expect(page.get_by_role("status").first).to_contain_text("2 new chapters")
    items = page.locator(".updates li.update")
    expect(items).to_have_count(2)
    expect(items.nth(0)).to_contain_text("Chapter 5")  # the newest first
    expect(page.locator(".updates li.unread")).to_have_count(2)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], "the page is wider than the phone"
    shot(page, "updates-phone")

    page.get_by_role("button", name="Mark all read").click()
    expect(page.get_by_role("status").first).to_contain_text("2 chapters marked read")
    expect(page.locator(".updates li.unread")).to_have_count(0)
    expect(page.get_by_role("button", name="Mark all read")).to_be_disabled()
    assert api(base, "GET", "/_/follows/updates?unread=1")["updates"] == []

    items.nth(1).locator("a.chapter").click()  # chapter 4 opens in the reader
    wait_for_page_image(page)
    page.goto(f"{base}/_/#/m/mangadex/{manga}")
    page.get_by_role("button", name="Unfollow").click()
    expect(page.get_by_role("button", name="Follow", exact=True)).to_be_visible()
    assert api(base, "GET", "/_/follows")["follows"] == []
    assert errors == []


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = tmp_path / "library"
    write_demo_library(root, series=1, chapters=2, pages=5)
    return root


@pytest.fixture
def library_host(library: Path, tmp_path: Path) -> Iterator[str]:
    """The library, watched (a file dropped in is indexed), with one reader."""
    port = free_port()
    app = build_app(
        {"local": (LocalLibrary, {"root": str(library), "watch": True})},
        data_dir=tmp_path / "data",
        server={"host": "127.0.0.1", "port": port},
        limits={"rate_limit": 0},
        follows={"round": 1},
    )
    app.state.core.readers.readers.add(MIKA, PASSWORD)
    yield from listening(app, port)


def synced_from_koreader(base: str, book: Path, page: int, pages: int) -> None:
    """KOReader's sync plugin reports its place in the book (its own event loop, as a device is)."""

    async def sync() -> int:
        async with httpx.AsyncClient(base_url=base, timeout=20) as client:
            device = KOReader(client, MIKA, PASSWORD)
            return (await device.update_progress(book_digest(book), page, pages)).status_code

    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(asyncio.run, sync()).result() == 200


def test_a_chapter_read_in_koreader_is_read_on_the_updates_page(
    browser: Any, library_host: str, library: Path
) -> None:
    base = library_host
    [series] = api(base, "POST", "/local/search", json={"page": 1, "sort": "title"})["results"]
    api(base, "PUT", f"/_/follows/series/local/{series['slug']}")
    until_checked(base, series["slug"], "local")
    book = cbz(library / series["title"] / f"{series['title']} Ch.003.cbz", pages=5)
    deadline = time.monotonic() + 30
    while len(api(base, "GET", f"/local/{series['slug']}/chapters")) < 3:
        assert time.monotonic() < deadline, "the library never saw the new file"
        time.sleep(0.2)

    page, errors = signed_in_page(browser, base, DESKTOP)
    page.goto(f"{base}/_/#/updates")
    page.get_by_role("button", name="Check now").click()
    expect(page.locator(".updates li.unread")).to_have_count(1)
    expect(page.locator(".updates li.unread")).to_contain_text(series["title"])

    synced_from_koreader(base, book, 5, 5)  # the last page, in KOReader
    page.reload()
    expect(page.locator(".updates li.update")).to_have_count(1)
    expect(page.locator(".updates li.unread")).to_have_count(0)
    expect(page.locator(".summary")).to_have_text("0 unread · 1 series followed")
    page.get_by_role("link", name="Home").click()
    shelf = page.get_by_role("list", name="Following")
    expect(shelf).to_contain_text(series["title"])
    expect(shelf.locator(".unread-count")).to_have_count(0)
    assert errors == []
