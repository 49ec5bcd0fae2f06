"""The Downloads page in Chromium: the queue of the series kept, each chapter's progress and the
queue's, a failure with its reason, and the buttons that steer it, as an operator uses them."""

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.browsing import DESKTOP, Watched, listening, shot, watched_page
from tests.helpers.serving import free_port
from tests.sources.mangadex.fake import API, REPORT, UPLOADS, FakeMangaDex
from tests.sources.mangadex.image_servers import ImageServers
from tests.sources.mangadex.sample import two_series
from toshokan.sources.local import LocalLibrary
from toshokan.sources.mangadex import MangaDex
from toshokan.testing import build_app


@pytest.fixture(scope="module")
def fake() -> FakeMangaDex:
    return two_series()


@pytest.fixture(scope="module")
def keeping(fake: FakeMangaDex, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A host keeping series of the fake MangaDex in its library; an upstream failure is
    final at once (one try), so the page shows it without waiting."""
    port = free_port()
    library = tmp_path_factory.mktemp("keeping") / "library"
    library.mkdir()
    app = build_app(
        {
            "local": (LocalLibrary, {"root": str(library), "watch": True}),
            "mangadex": (
                MangaDex,
                {"api_url": API, "uploads_url": UPLOADS, "report_url": REPORT},
            ),
        },
        upstream=ImageServers(fake),
        data_dir=library.parent / "data",
        server={"host": "127.0.0.1", "port": port},
        limits={"rate_limit": 0},
        follows={"round": 1},
        keep={"attempts": 1},
    )
    yield from listening(app, port)


@pytest.fixture
def desktop(browser: Any, keeping: str) -> Iterator[Watched]:
    yield from watched_page(browser, keeping, DESKTOP)


def until(check: Any, seconds: float = 30.0) -> Any:
    deadline = time.monotonic() + seconds
    while not (found := check()):
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.1)
    return found


def test_the_queue_shows_progress_and_failures_and_is_steered(
    desktop: Watched, fake: FakeMangaDex
) -> None:
    base = desktop.base
    manga = next(m.id for m in fake.manga.values() if m.title["en"] == "Pirate Voyage")
    series = f"{base}/_/follows/series/mangadex/{manga}"
    assert httpx.put(series).status_code == 201
    until(lambda: httpx.get(series).json()["state"] == "ok")
    assert httpx.put(f"{base}/_/downloads/queue", json={"paused": True}).status_code == 200
    assert httpx.put(f"{series}/keep", json={"backfill": 3}).status_code == 201

    page = desktop.open("/_/#/downloads")
    expect(page.get_by_role("heading", name="Downloads")).to_be_visible()
    expect(page.locator(".queue-state")).to_contain_text("Paused by the operator.")
    waiting = page.locator(".downloads.waiting > li")
    expect(waiting).to_have_count(3)
    titles = waiting.locator(".title")
    expect(titles).to_have_text(
        [f"Pirate Voyage · Chapter {n} [Straw Hat Scans] (en)" for n in (1, 2, 3)]
    )
    expect(page.locator(".overall")).to_contain_text("0 kept, 3 waiting")
    # The third first, the first held.
    page.get_by_role("button", name="To the top: Pirate Voyage · Chapter 3", exact=False).click()
    expect(titles.first).to_contain_text("Chapter 3")
    page.get_by_role("button", name="Hold: Pirate Voyage · Chapter 1", exact=False).click()
    expect(waiting.filter(has_text="Chapter 1").locator(".state")).to_have_text("Held")
    shot(page, "downloads-queue")

    # MangaDex fails the third chapter's page list: it fails, with its reason.
    third = next(c.id for c in fake.chapters.values() if c.manga_id == manga and c.chapter == "3")
    fake.script(rf"^/at-home/server/{third}$", status=500, times=100)
    page.get_by_role("button", name="Resume the queue").click()
    expect(page.locator(".queue-state")).to_contain_text("The queue runs.")
    failed = page.locator(".downloads.failed > li")
    expect(failed).to_have_count(1, timeout=30_000)
    expect(failed.locator(".title")).to_contain_text("Chapter 3")
    expect(failed.locator(".reason")).to_contain_text("upstream-error")
    finished = page.locator(".downloads.finished > li")
    expect(finished.filter(has_text="Chapter 2").locator(".state")).to_have_text(
        "Kept", timeout=30_000
    )
    bar = finished.filter(has_text="Chapter 2").locator("progress")
    assert bar.get_attribute("value") == bar.get_attribute("max") == "3"
    shot(page, "downloads-failed")

    fake.scripts.clear()
    failed.get_by_role("button", name="Retry", exact=False).first.click()
    page.get_by_role("button", name="Resume: Pirate Voyage · Chapter 1", exact=False).click()
    expect(finished.locator(".state")).to_have_text(["Kept", "Kept", "Kept"], timeout=30_000)
    expect(page.locator(".downloads.failed > li")).to_have_count(0)
    expect(page.locator(".overall")).to_contain_text("Nothing waiting.")
    kept = httpx.get(f"{base}/_/downloads").json()["downloads"]
    assert sorted(Path(d["path"]).name for d in kept) == [
        f"Pirate Voyage Vol.1 Ch.{n} - Chapter {n} [Straw Hat Scans].cbz" for n in (1, 2, 3)
    ]
    assert desktop.errors == []


REN, REN_PASSWORD = "ren", "swordfish and chips"


@pytest.fixture(scope="module")
def readers_keeping(fake: FakeMangaDex, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A host keeping series of the fake MangaDex for its readers (none an operator)."""
    port = free_port()
    library = tmp_path_factory.mktemp("readers-keeping") / "library"
    library.mkdir()
    app = build_app(
        {
            "local": (LocalLibrary, {"root": str(library), "watch": True}),
            "mangadex": (
                MangaDex,
                {"api_url": API, "uploads_url": UPLOADS, "report_url": REPORT},
            ),
        },
        upstream=ImageServers(fake),
        data_dir=library.parent / "data",
        server={"host": "127.0.0.1", "port": port},
        limits={"rate_limit": 0},
        follows={"round": 1},
    )
    app.state.core.readers.readers.add(REN, REN_PASSWORD)
    yield from listening(app, port)


def test_a_reader_pauses_their_downloads_and_sees_what_they_keep_from_a_source(
    browser: Any, readers_keeping: str, fake: FakeMangaDex
) -> None:
    base = readers_keeping
    ren = httpx.BasicAuth(REN, REN_PASSWORD)
    manga = next(m.id for m in fake.manga.values() if m.title["en"] == "Pirate Voyage")
    series = f"{base}/_/follows/series/mangadex/{manga}"
    assert httpx.put(series, auth=ren).status_code == 201
    until(lambda: httpx.get(series, auth=ren).json()["state"] == "ok")
    every = {"languages": ["en"], "onlyUnread": True}
    assert httpx.put(f"{base}/_/follows/sources/mangadex/keep", json=every, auth=ren).is_success

    for watched in watched_page(browser, base, DESKTOP):
        page = watched.open("/_/#/downloads")
        page.get_by_label("Name").fill(REN)
        page.get_by_label("Password or API key").fill(REN_PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("heading", name="Downloads")).to_be_visible()
        kept_from = page.locator(".every-series > li")
        expect(kept_from).to_have_count(1)
        expect(kept_from).to_contain_text("mangadex: every series followed")
        expect(kept_from).to_contain_text("languages en · any group · only unread")
        expect(page.get_by_role("button", name="Pause the queue")).to_have_count(0)

        page.get_by_role("button", name="Pause my downloads").click()
        expect(page.locator(".queue-state")).to_contain_text("Your downloads are paused")
        expect(page.locator(".queue-state")).to_contain_text("The queue runs.")
        kept = httpx.put(f"{series}/keep", json={"backfill": 2}, auth=ren)
        assert kept.status_code == 201, kept.text
        waiting = page.locator(".downloads.waiting > li")
        expect(waiting.locator(".state")).to_have_text(["Queued", "Queued"])
        shot(page, "downloads-reader-paused")

        page.get_by_role("button", name="Resume my downloads").click()
        expect(page.locator(".own-paused")).to_have_count(0)
        finished = page.locator(".downloads.finished > li")
        expect(finished.locator(".state")).to_have_text(["Kept", "Kept"], timeout=30_000)
        assert watched.errors == []
