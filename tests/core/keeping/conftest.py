"""A host serving a local library (watched, so kept files are found by themselves) beside the
fake MangaDex, whose chapters are kept into that library."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.sources.mangadex.fake import API, REPORT, UPLOADS, FakeMangaDex
from tests.sources.mangadex.image_servers import ImageServers
from tests.sources.mangadex.sample import two_series
from toshokan.sources.local import LocalLibrary, LocalSettings
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, serve_host


@pytest.fixture
def fake() -> FakeMangaDex:
    return two_series()


@pytest.fixture
def servers(fake: FakeMangaDex) -> ImageServers:
    return ImageServers(fake)


@pytest.fixture
def library(tmp_path: Path) -> Path:
    folder = tmp_path / "library"
    folder.mkdir()
    return folder


@pytest.fixture
async def host(
    servers: ImageServers, library: Path, tmp_path: Path, database_url: str | None
) -> AsyncIterator[ServedHost]:
    sources: dict[str, Any] = {
        "local": (LocalLibrary, LocalSettings(root=library, watch=True, start_wait=5)),
        "mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS, report_url=REPORT)),
    }
    async with serve_host(
        sources,
        upstream=servers,
        data_dir=tmp_path / "data",
        limits={"rate_limit": 0},
        cluster={"database": database_url},
    ) as served:
        yield served
