"""Fixtures: hosts serving the local library and a fake MangaDex, with their images."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.helpers.libraries import DemoLibrary
from tests.sources.mangadex.fake import API, UPLOADS, FakeMangaDex
from tests.sources.mangadex.image_servers import ImageServers
from tests.sources.mangadex.sample import two_series
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, SourceSpec

from .servers import ATTEMPTS, LOCKED, local, serving


@pytest.fixture
def library(demo_library: DemoLibrary) -> Path:
    return demo_library(series=3, chapters=2, pages=3)


@pytest.fixture
async def local_host(library: Path, tmp_path: Path) -> AsyncIterator[ServedHost]:
    async with serving({"local": local(library)}, tmp_path) as served:
        yield served


@pytest.fixture
async def locked_host(library: Path, tmp_path: Path) -> AsyncIterator[ServedHost]:
    async with serving({"shelf": local(library, **LOCKED)}, tmp_path) as served:
        yield served


@pytest.fixture
async def readers_host(
    tmp_path: Path, demo_library: DemoLibrary, database_url: str | None
) -> AsyncIterator[ServedHost]:
    """A library of longer chapters (6 pages), on a host that will have readers; their
    progress in SQLite or in PostgreSQL."""
    root = demo_library(series=1, chapters=3, pages=6)
    async with serving(
        {"local": local(root)}, tmp_path, database_url=database_url, auth_attempts=ATTEMPTS
    ) as served:
        yield served


@pytest.fixture
def fake() -> FakeMangaDex:
    return two_series()


@pytest.fixture
def image_servers(fake: FakeMangaDex) -> ImageServers:
    return ImageServers(fake)


@pytest.fixture
async def mangadex_host(image_servers: ImageServers, tmp_path: Path) -> AsyncIterator[ServedHost]:
    spec = (MangaDex, Settings(api_url=API, uploads_url=UPLOADS))
    async with serving({"mangadex": spec}, tmp_path, upstream=image_servers) as served:
        yield served


@pytest.fixture
async def both_host(
    library: Path, image_servers: ImageServers, tmp_path: Path
) -> AsyncIterator[ServedHost]:
    """The local library, a locked copy of it, and MangaDex, on one host."""
    sources: dict[str, SourceSpec] = {
        "local": local(library),
        "shelf": local(library, **LOCKED),
        "mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS)),
    }
    async with serving(sources, tmp_path, upstream=image_servers) as served:
        yield served
