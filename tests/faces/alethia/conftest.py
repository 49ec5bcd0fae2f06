"""A host serving a sample library, as the app reaches it."""

import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from toshokan.sources.local import LocalLibrary, write_demo_library
from toshokan.testing import ServedHost, serve_host

Library = Callable[..., AbstractAsyncContextManager[ServedHost]]


@pytest.fixture(scope="session")
def sample_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("alethia-library") / "library"
    write_demo_library(root, series=3, chapters=3, pages=2)
    return root


@pytest.fixture
def library(tmp_path: Path, sample_library: Path) -> Library:
    """``library(**local_settings)``: a host serving a copy of the sample library as ``local``."""

    def serving(**options: Any) -> AbstractAsyncContextManager[ServedHost]:
        root = tmp_path / "library"
        if not root.exists():
            shutil.copytree(sample_library, root, copy_function=shutil.copy2)
        options = {"root": str(root), "watch": False, **options}
        return serve_host({"local": (LocalLibrary, options)}, data_dir=tmp_path / "data")

    return serving


@pytest.fixture
async def served(library: Library) -> AsyncIterator[ServedHost]:
    async with library() as host:
        yield host
