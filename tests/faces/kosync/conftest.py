"""A host serving a small local library (2 series of 2 chapters of 5 pages)."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.helpers.hosts import serve_library
from tests.helpers.libraries import DemoLibrary
from toshokan.testing import ServedHost


@pytest.fixture
def library(demo_library: DemoLibrary) -> Path:
    return demo_library(series=2, chapters=2, pages=5)


@pytest.fixture
async def host(library: Path, tmp_path: Path) -> AsyncIterator[ServedHost]:
    async with serve_library(library, tmp_path / "data") as served:
        yield served
