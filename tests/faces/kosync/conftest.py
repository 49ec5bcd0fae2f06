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
async def host(
    library: Path, tmp_path: Path, database_url: str | None
) -> AsyncIterator[ServedHost]:
    """Readers and progress in SQLite and, in a second run, in PostgreSQL."""
    cluster = {"database": database_url}
    async with serve_library(library, tmp_path / "data", cluster=cluster) as served:
        yield served
