"""A real host on a local port and Debian's Chromium driven by Playwright, for tests of what people see.

Playwright cannot download browsers here, so it drives the system Chromium
(``TOSHOKAN_CHROMIUM`` or ``/usr/bin/chromium``). Without it the browser
tests skip on a developer's machine, and fail in CI (``CI`` set, or
``TOSHOKAN_BROWSER_TESTS=required``), where ``.ci/run`` installs it.
"""

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.browsing import (
    DESKTOP,
    FAILING_MESSAGE,
    PASSWORD,
    PHONE,
    SHELF_SERIES,
    USERNAME,
    Watched,
    listening,
    watched_page,
)
from tests.browser.pictured import Pictured
from tests.helpers.serving import free_port
from tests.sources.local.helpers import cbz
from toshokan.core import Core
from toshokan.core.progress import IMPLICIT_READER
from toshokan.sdk import RequestContext, SearchRequest, SearchResponse, UpstreamError
from toshokan.sources.local import LocalLibrary, write_demo_library
from toshokan.testing import build_app

CHROMIUM = Path(os.environ.get("TOSHOKAN_CHROMIUM", "/usr/bin/chromium"))


def browser_required() -> bool:
    return bool(os.environ.get("CI")) or os.environ.get("TOSHOKAN_BROWSER_TESTS") == "required"


@pytest.fixture(scope="session")
def chromium_path() -> Path:
    if not CHROMIUM.is_file():
        message = f"Chromium not found at {CHROMIUM} (apt-get install -y chromium)"
        if browser_required():
            pytest.fail(message)
        pytest.skip(message)
    return CHROMIUM


@pytest.fixture(scope="module")
def browser(chromium_path: Path) -> Iterator[Any]:
    """Per module: Playwright's synchronous API holds an event loop open, which the async
    tests elsewhere in the suite must not find running."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(chromium_path))
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Core]]:
    """The host serving the sample library open (``local``) and behind a password (``locked``),
    and a library of many one-page series (``shelf``)."""
    port = free_port()
    root = tmp_path_factory.mktemp("web") / "library"
    write_demo_library(root)
    locked = root.parent / "locked"
    shutil.copytree(root, locked)
    shelf = root.parent / "shelf"
    for number in range(1, SHELF_SERIES + 1):
        cbz(shelf / f"Series {number:02d}" / "Chapter 1.cbz", pages=1)
    app = build_app(
        {
            "local": (LocalLibrary, {"root": str(root), "watch": False}),
            "shelf": (
                LocalLibrary,
                {"root": str(shelf), "watch": False, "name": "Long Shelf", "nsfw": True},
            ),
            "locked": (
                LocalLibrary,
                {
                    "root": str(locked),
                    "watch": False,
                    "name": "Locked Library",
                    "auth": "basic",
                    "username": USERNAME,
                    "password": PASSWORD,
                },
            ),
        },
        data_dir=root.parent / "data",
        # Links the sources build (covers, pages) name the address the host listens at.
        server={"host": "127.0.0.1", "port": port},
        # The tests click faster than any person; the per-client limit is the edge's own tests' concern.
        limits={"rate_limit": 0},
    )
    for address in listening(app, port):
        yield address, app.state.core


@pytest.fixture(scope="session")
def host(served: tuple[str, Core]) -> str:
    return served[0]


@pytest.fixture
def nothing_read(served: tuple[str, Core]) -> None:
    """The host keeps the place of its one reader (it has no accounts) across browsers: each
    test starts as someone who has read nothing there yet."""
    served[1].readers.readers.remove(IMPLICIT_READER)


class FailingLibrary(LocalLibrary):
    """A library whose searches fail as an upstream that is down does."""

    async def search(self, request: SearchRequest, ctx: RequestContext) -> SearchResponse:
        raise UpstreamError(FAILING_MESSAGE)


@pytest.fixture(scope="module")
def failing_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A host with a working library (``local``) and one whose every search fails (``down``)."""
    port = free_port()
    root = tmp_path_factory.mktemp("failing") / "library"
    write_demo_library(root, series=2, chapters=1, pages=1)
    app = build_app(
        {
            "local": (LocalLibrary, {"root": str(root), "watch": False}),
            "down": (FailingLibrary, {"root": str(root), "watch": False, "name": "Down Shelf"}),
        },
        data_dir=root.parent / "data",
        server={"host": "127.0.0.1", "port": port},
        limits={"rate_limit": 0},
    )
    yield from listening(app, port)


@pytest.fixture(scope="module")
def pictured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Core]]:
    """Catalogs whose titles read right to left (``manga``), down a strip (``webtoon``) and as
    their source does not say (``comics``), each page a picture the host serves."""
    port = free_port()
    options: dict[str, Any] = {"titles": 3}
    app = build_app(
        {
            "manga": (Pictured, {**options, "reading_direction": "rtl"}),
            "webtoon": (Pictured, {**options, "reading_direction": "vertical"}),
            "comics": (Pictured, options),
        },
        data_dir=tmp_path_factory.mktemp("pictured") / "data",
        server={"host": "127.0.0.1", "port": port},
        limits={"rate_limit": 0, "image_rate_limit": 0},
    )
    for address in listening(app, port):
        yield address, app.state.core


@pytest.fixture
def pictured_host(pictured: tuple[str, Core]) -> str:
    """The catalogs with pictures, where no one has read anything yet."""
    pictured[1].readers.readers.remove(IMPLICIT_READER)
    return pictured[0]


@pytest.fixture
def desktop(browser: Any, host: str, nothing_read: None) -> Iterator[Watched]:
    yield from watched_page(browser, host, DESKTOP)


@pytest.fixture
def phone(browser: Any, host: str, nothing_read: None) -> Iterator[Watched]:
    yield from watched_page(browser, host, PHONE)
