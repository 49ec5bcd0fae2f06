"""A host following series of a fake MangaDex, its rounds a second apart, on both engines."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.sources.mangadex.fake import API, UPLOADS, FakeMangaDex
from tests.sources.mangadex.sample import two_series
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, serve_host


@pytest.fixture
def fake() -> FakeMangaDex:
    return two_series()


@pytest.fixture
async def host(
    fake: FakeMangaDex, tmp_path: Path, database_url: str | None
) -> AsyncIterator[ServedHost]:
    async with serve_host(
        {"mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS))},
        upstream=fake.transport(),
        data_dir=tmp_path / "data",
        limits={"rate_limit": 0},
        follows={"round": 1},
        cluster={"database": database_url},
    ) as served:
        yield served
