"""Hosts for the Komga face: the sample library, a fake MangaDex with its image servers, a fake
OPDS upstream; and Mihon's network over each (the app's one cookie jar).

What the tests share beyond fixtures (the address, Mihon set up for a host) is in
``helpers.py``.
"""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.sources.mangadex.fake import API, UPLOADS, FakeMangaDex
from tests.sources.mangadex.image_servers import ImageServers
from tests.sources.mangadex.sample import two_series
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, serve_host

from .helpers import ATTEMPTS, SECRET


@pytest.fixture
async def local_host(tmp_path: Path) -> AsyncIterator[ServedHost]:
    """Three series of two chapters of three pages, on a host with no readers."""
    root = tmp_path / "library"
    write_demo_library(root, series=3, chapters=2, pages=3)
    async with serve_host(
        {"local": (LocalLibrary, LocalSettings(root=root, watch=False))},
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0, "auth_attempts": ATTEMPTS},
    ) as served:
        yield served


@pytest.fixture
def mangadex_fake() -> FakeMangaDex:
    return two_series()


@pytest.fixture
async def mangadex_host(mangadex_fake: FakeMangaDex, tmp_path: Path) -> AsyncIterator[ServedHost]:
    servers = ImageServers(mangadex_fake)
    async with serve_host(
        {"mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS))},
        upstream=servers,
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0},
    ) as served:
        served.app.state.image_servers = servers
        yield served
