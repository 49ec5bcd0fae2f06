"""Fixtures: a fake MangaDex, host services that reach it, and adapters built on them."""

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from toshokan.sources.mangadex import MangaDex, Settings

from .fake import API, UPLOADS, FakeMangaDex
from .services import USER_AGENT, FakeServices


@pytest.fixture
def fake() -> FakeMangaDex:
    return FakeMangaDex()


@pytest.fixture
async def services(fake: FakeMangaDex, tmp_path: Path) -> AsyncIterator[FakeServices]:
    services = FakeServices(
        user_agent=USER_AGENT, data_dir=tmp_path, secret=b"test", http_timeout=2.0
    )
    services.fake_transport = fake.transport()
    yield services
    await services.aclose()


@pytest.fixture
def make_source(services: FakeServices) -> Callable[..., MangaDex]:
    def make(**settings: Any) -> MangaDex:
        options = Settings(api_url=API, uploads_url=UPLOADS, **settings)
        return MangaDex("mangadex", options, services)

    return make


@pytest.fixture
def source(make_source: Callable[..., MangaDex]) -> MangaDex:
    return make_source()
