"""The demo library, copied for each test, and a source serving it (``make_source`` is shared
by the root conftest)."""

from pathlib import Path

import pytest

from tests.helpers.libraries import DemoLibrary
from tests.helpers.local_sources import SourceFactory
from toshokan.sources.local import LocalLibrary


@pytest.fixture
def demo_root(demo_library: DemoLibrary) -> Path:
    return demo_library()


@pytest.fixture
async def demo_source(make_source: SourceFactory, demo_root: Path) -> LocalLibrary:
    return await make_source(demo_root)
