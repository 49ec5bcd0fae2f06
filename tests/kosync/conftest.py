"""Hosts serving a small local library, with and without readers; their readers and progress
in SQLite and in PostgreSQL (``database_url``)."""

import shutil
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from tests.databases import database_url, module_database_url, postgres_server
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library
from toshokan.testing import ServedHost, serve_host

__all__ = ["database_url", "module_database_url", "postgres_server"]


@pytest.fixture(scope="session")
def library_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kosync-library") / "library"
    write_demo_library(root, series=2, chapters=2, pages=5)
    return root


@pytest.fixture
def library(tmp_path: Path, library_template: Path) -> Path:
    root = tmp_path / "library"
    shutil.copytree(library_template, root, copy_function=shutil.copy2)
    return root


def serve_library(
    library: Path, data_dir: Path, **settings: Any
) -> AbstractAsyncContextManager[ServedHost]:
    """The library served from ``data_dir``, with host ``settings``; no rate limit unless set."""
    spec = (LocalLibrary, LocalSettings(root=library, watch=False))
    settings.setdefault("limits", {"rate_limit": 0})
    return serve_host({"local": spec}, data_dir=data_dir, **settings)


@pytest.fixture
async def host(
    library: Path, tmp_path: Path, database_url: str | None
) -> AsyncIterator[ServedHost]:
    cluster = {"database": database_url}
    async with serve_library(library, tmp_path / "data", cluster=cluster) as served:
        yield served
