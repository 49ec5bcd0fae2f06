"""Fixtures: sample libraries, and a source started inside a host."""

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from toshokan.sdk import HostServices
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library
from toshokan.testing import serve

SECRET = b"test-secret-0123456789abcdef0123"

SourceFactory = Callable[..., Awaitable[LocalLibrary]]


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo-template") / "library"
    write_demo_library(root)
    return root


@pytest.fixture
def demo_root(tmp_path: Path, demo_template: Path) -> Path:
    import shutil

    root = tmp_path / "library"
    shutil.copytree(demo_template, root, copy_function=shutil.copy2)
    return root


def services(tmp_path: Path) -> HostServices:
    return HostServices(
        user_agent="toshokan-test",
        data_dir=tmp_path / "data",
        secret=SECRET,
        public_url="http://testserver",
    )


_clients: dict[int, httpx.AsyncClient] = {}


@pytest.fixture
async def make_source(tmp_path: Path) -> AsyncIterator[SourceFactory]:
    """Start a library source inside a whole host; ``client_for(source)`` reaches that host."""
    async with AsyncExitStack() as stack:

        async def make(root: Path, slug: str = "local", **options: Any) -> LocalLibrary:
            options.setdefault("watch", False)
            options.setdefault("start_wait", 120)  # tests start from a complete first scan
            served = await stack.enter_async_context(
                serve(
                    LocalLibrary,
                    LocalSettings(root=root, **options),
                    slug=slug,
                    data_dir=tmp_path / "data",
                    host={"secret": SECRET.decode(), "public_url": "http://testserver"},
                )
            )
            source: LocalLibrary = served.source(slug)
            _clients[id(source)] = served.client
            return source

        yield make
    _clients.clear()


@pytest.fixture
async def demo_source(make_source: SourceFactory, demo_root: Path) -> LocalLibrary:
    return await make_source(demo_root)


@asynccontextmanager
async def client_for(source: LocalLibrary) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the host serving ``source`` (made by ``make_source``)."""
    yield _clients[id(source)]
