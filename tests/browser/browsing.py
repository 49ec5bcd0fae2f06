"""What the browser tests share besides fixtures: the sample hosts' names, a host served on a
port, a page that records what it asked for, and how to read the reader's page counter."""

import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from playwright.sync_api import expect

USERNAME, PASSWORD = "reader", "correct horse battery staple"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
#: What every search of the failing library answers: long, as upstreams' messages can be.
FAILING_MESSAGE = (
    "The upstream failed with HTTP 503: the catalogue is down for scheduled maintenance"
)
#: More series than one page of search results holds, so that scrolling loads more.
SHELF_SERIES = 30

#: ``TOSHOKAN_SCREENSHOTS=docs/screenshots`` refreshes the pictures of docs/web-reader.md and the README while the tests run.
SCREENSHOTS = os.environ.get("TOSHOKAN_SCREENSHOTS")
PAGE_COUNTER = re.compile(r"page (\d+) of (\d+)")
#: What stands between the numbers of a spread's two pages: an en dash ("pages 2, dash, 3 of 8").
DASH = "\N{EN DASH}"
#: What Chromium logs by itself for an HTTP error answer the page then shows as a message.
HTTP_ERROR_LOG = re.compile(
    r"^Failed to load resource: the server responded with a status of 40[14]"
)


def shot(page: Any, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(
            path=str(Path(SCREENSHOTS) / f"{name}.png"), full_page=name != "reader-strip"
        )


def counter(page: Any) -> Any:
    """The toolbar's page counter (its text is there while the toolbar is out of sight)."""
    return page.locator(".reader-bar .where .counter")


def position(page: Any) -> tuple[int, int]:
    expect(counter(page)).to_have_text(PAGE_COUNTER)
    found = PAGE_COUNTER.search(counter(page).text_content() or "")
    assert found is not None
    return int(found[1]), int(found[2])


def at(page: Any, number: int) -> None:
    """The reader shows page ``number`` alone."""
    expect(counter(page)).to_have_text(re.compile(rf"^page {number} of \d+$"))


def showing(page: Any, number: int) -> None:
    """The reader shows page ``number``: alone, or in a spread of two (a wide screen's)."""
    expect(counter(page)).to_have_text(
        re.compile(rf"^(page {number}|pages {number}{DASH}\d+|pages \d+{DASH}{number}) of \d+$")
    )


def toolbar(page: Any) -> Any:
    """The reader's toolbar, brought back as a person does, by a tap in the middle of the page
    (it steps aside while they read)."""
    bar = page.locator(".reader-bar")
    if page.locator(".reader.chrome-hidden").count():
        box = page.locator(".pages").bounding_box()
        middle = page.viewport_size
        page.mouse.click(middle["width"] / 2, min(box["y"] + box["height"], middle["height"]) / 2)
    expect(bar).to_be_visible()
    return bar


def reading_settings(page: Any) -> Any:
    """The toolbar with its settings open (behind a button on a narrow screen)."""
    bar = toolbar(page)
    button = bar.get_by_role("button", name="Settings")
    if button.is_visible() and button.get_attribute("aria-expanded") != "true":
        button.click()
    expect(bar.locator(".reader-settings")).to_be_visible()
    return bar


def wait_for_page_image(page: Any) -> None:
    page.wait_for_function("() => document.querySelector('.pages img')?.naturalWidth > 0")


def listening(app: Any, port: int) -> Iterator[str]:
    """Serve ``app`` on ``port`` in a thread; its address until the caller is done."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise AssertionError("the host did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


@dataclass
class Watched:
    """A browser page that records every request and every console error, to be checked at the end."""

    page: Any
    base: str
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def open(self, path: str) -> Any:
        self.page.goto(self.base + path)
        return self.page

    def foreign_requests(self) -> list[str]:
        local = (self.base + "/", "data:", "blob:")
        return [url for url in self.requests if not url.startswith(local)]


def watched_page(browser: Any, base: str, viewport: dict[str, int]) -> Iterator[Watched]:
    context = browser.new_context(viewport=viewport, base_url=base)
    page = context.new_page()
    page.set_default_timeout(15_000)
    watched = Watched(page, base)
    page.on("request", lambda request: watched.requests.append(request.url))
    page.on(
        "console",
        lambda message: watched.errors.append(message.text) if message.type == "error" else None,
    )
    page.on("pageerror", lambda error: watched.errors.append(str(error)))
    try:
        yield watched
    finally:
        context.close()
    assert watched.foreign_requests() == [], "requests left the host"
