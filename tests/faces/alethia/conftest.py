"""A host serving a sample library, as the app reaches it."""

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from tests.faces.alethia.reader import Library
from tests.helpers.libraries import DemoLibrary
from toshokan.sources.local import LocalLibrary
from toshokan.testing import ServedHost, serve_host


@pytest.fixture
def library(tmp_path: Path, demo_library: DemoLibrary) -> Library:
    """``library(**local_settings)``: a host serving a copy of the sample library as ``local``."""

    def serving(**options: Any) -> AbstractAsyncContextManager[ServedHost]:
        root = demo_library(series=3, chapters=3, pages=2)
        options = {"root": str(root), "watch": False, **options}
        return serve_host({"local": (LocalLibrary, options)}, data_dir=tmp_path / "data")

    return serving


@pytest.fixture
async def served(library: Library) -> AsyncIterator[ServedHost]:
    async with library() as host:
        yield host
