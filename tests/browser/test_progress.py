"""The web reader keeps each reader's place on the host: read on one device, continue on another.

Each browser context is a device of its own: no cookies, no localStorage shared.
"""

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.browsing import (
    DESKTOP,
    HTTP_ERROR_LOG,
    PHONE,
    at,
    listening,
    shot,
    showing,
    wait_for_page_image,
    watched_page,
)
from tests.helpers.serving import free_port
from toshokan.sources.local import LocalLibrary, write_demo_library
from toshokan.testing import build_app

SERIES = "/_/#/m/local/hoshi-no-tabibito"
MIKA, MIKA_PASSWORD = "mika", "hunter2 but longer"
REN, REN_PASSWORD = "ren", "swordfish and chips"


def library_host(
    tmp_path: Path, readers: dict[str, str], auth: str = "none", **limits: int
) -> Iterator[str]:
    """The demo library on a fresh host (its own readers' database) with ``readers``."""
    port = free_port()
    root = tmp_path / "library"
    write_demo_library(root, series=2, chapters=2, pages=6)
    app = build_app(
        {"local": (LocalLibrary, {"root": str(root), "watch": False, "auth": auth})},
        data_dir=tmp_path / "data",
        server={"host": "127.0.0.1", "port": port},
        limits={"rate_limit": 0, **limits},
    )
    for name, password in readers.items():
        app.state.core.readers.readers.add(name, password)
    yield from listening(app, port)


@pytest.fixture(scope="module")
def readers_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from library_host(
        tmp_path_factory.mktemp("readers"), {MIKA: MIKA_PASSWORD, REN: REN_PASSWORD}
    )


@pytest.fixture
def open_host(tmp_path: Path) -> Iterator[str]:
    yield from library_host(tmp_path, {})


@pytest.fixture
def strict_host(tmp_path: Path) -> Iterator[str]:
    """A host that allows two wrong sign-ins a minute from one address."""
    yield from library_host(tmp_path, {MIKA: MIKA_PASSWORD}, auth_attempts=2)


@pytest.fixture
def readers_source_host(tmp_path: Path) -> Iterator[str]:
    """The library accepts the host's readers (``auth = "readers"``)."""
    yield from library_host(tmp_path, {MIKA: MIKA_PASSWORD}, auth="readers")


def device(browser: Any, base: str, size: dict[str, int] = DESKTOP) -> Iterator[Any]:
    """A browser context of its own: a laptop, or given its size, a phone."""
    yield from watched_page(browser, base, size)


def sign_in(page: Any, name: str, password: str) -> None:
    expect(page.get_by_role("heading", name="Sign in", exact=True)).to_be_visible()
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password or API key").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


def read_to_page_three(page: Any, base: str) -> str:
    """Open the series' first chapter and turn to page 3 (one page at a time, as on a phone);
    the chapter's address."""
    page.goto(base + SERIES)
    page.get_by_role("link", name="Start reading").click()
    wait_for_page_image(page)
    with page.expect_response(lambda r: r.request.method == "PUT" and r.ok):
        page.keyboard.press("ArrowRight")
    at(page, 2)
    with page.expect_response(lambda r: r.request.method == "PUT" and r.ok):
        page.keyboard.press("ArrowRight")
    at(page, 3)
    return str(page.url)


def test_a_readers_place_follows_them_to_another_device_and_no_one_else(
    browser: Any, readers_host: str
) -> None:
    for phone in device(browser, readers_host, PHONE):
        page = phone.open("/_/")
        sign_in(page, MIKA, MIKA_PASSWORD)
        chapter = read_to_page_three(page, readers_host)
        assert phone.errors == []

    for laptop in device(browser, readers_host):
        page = laptop.open("/_/")
        # A new device knows no one: it asks who is reading before anything else.
        expect(page.get_by_role("heading", name="Sign in", exact=True)).to_be_visible()
        shot(page, "reader-sign-in")
        sign_in(page, MIKA, MIKA_PASSWORD)
        continuing = page.get_by_role("region", name="Continue reading")
        expect(continuing).to_contain_text("Hoshi no Tabibito")
        expect(continuing).to_contain_text("Chapter 1")
        expect(continuing).to_contain_text("page 3 of 6")
        shot(page, "continue-reading")
        continuing.get_by_role("link").first.click()
        page.wait_for_url(chapter)
        showing(page, 3)
        page.goto(readers_host + SERIES)
        expect(page.get_by_role("link", name=re.compile(r"^Continue: Chapter 1"))).to_be_visible()
        chapters = page.get_by_role("list", name="Chapters, newest first")
        expect(chapters).to_contain_text("read to page 3 of 6")
        assert laptop.errors == []

    for other in device(browser, readers_host):
        page = other.open("/_/")
        sign_in(page, REN, REN_PASSWORD)
        expect(page.locator(".sources a").first).to_be_visible()
        expect(page.get_by_role("region", name="Continue reading")).to_have_count(0)
        page.goto(readers_host + SERIES)
        expect(page.get_by_role("link", name="Start reading")).to_be_visible()
        expect(page.get_by_role("list", name="Chapters, newest first")).not_to_contain_text(
            "read to page"
        )
        # Signing out here asks again who is reading.
        page.get_by_role("button", name="Sign out").click()
        expect(page.get_by_role("heading", name="Sign in", exact=True)).to_be_visible()
        assert other.errors == []


def test_a_wrong_password_is_refused_and_too_many_are_told_apart(
    browser: Any, strict_host: str
) -> None:
    for watched in device(browser, strict_host):
        page = watched.open("/_/")
        expect(page.get_by_role("heading", name="Sign in", exact=True)).to_be_visible()
        page.get_by_label("Name").fill(MIKA)
        page.get_by_label("Password or API key").fill("not the password")
        page.get_by_role("button", name="Sign in").click()
        alert = page.get_by_role("alert")
        expect(alert).to_contain_text("Sign-in refused")
        expect(alert).to_contain_text("wrong password")
        shot(page, "reader-sign-in-refused")
        page.get_by_role("button", name="Sign in").click()
        expect(alert).to_contain_text("Sign-in refused")
        # Past the attempt budget even the right password waits, and the page says so.
        page.get_by_label("Password or API key").fill(MIKA_PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        expect(alert).to_contain_text("Too many attempts")
        expect(alert).to_contain_text(re.compile(r"retry in \d+ s"))
        expect(page.get_by_role("button", name="Sign out")).to_have_count(0)
        assert [e for e in watched.errors if not re.match(r"^Failed to load resource", e)] == []


def test_a_host_without_readers_asks_no_one_and_still_remembers(
    browser: Any, open_host: str
) -> None:
    for first in device(browser, open_host, PHONE):
        page = first.open("/_/")
        expect(page.locator(".sources a").first).to_be_visible()
        expect(page.get_by_role("heading", name="Sign in", exact=True)).to_have_count(0)
        chapter = read_to_page_three(page, open_host)
        assert first.errors == []

    for second in device(browser, open_host):
        page = second.open("/_/")
        continuing = page.get_by_role("region", name="Continue reading")
        expect(continuing).to_contain_text("Hoshi no Tabibito")
        expect(continuing).to_contain_text("page 3 of 6")
        page.goto(chapter)
        showing(page, 3)
        expect(page.get_by_role("button", name="Sign out")).to_have_count(0)
        assert [e for e in second.errors if not HTTP_ERROR_LOG.match(e)] == []


def test_the_readers_sign_in_opens_a_library_that_accepts_them(
    browser: Any, readers_source_host: str
) -> None:
    for laptop in device(browser, readers_source_host, PHONE):
        page = laptop.open("/_/")
        sign_in(page, MIKA, MIKA_PASSWORD)
        # No second sign-in for the library: the reader's session opens it.
        expect(page.locator(".sources .badge")).to_have_text("signed in")
        read_to_page_three(page, readers_source_host)
        assert laptop.errors == []
