"""A local library source started inside a whole host, and a client of that host: the local
source's tests and the hostile archives use it (``make_source`` is a fixture of every folder,
registered by the root conftest)."""

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from toshokan.sdk import HostServices
from toshokan.sources.local import LocalLibrary, LocalSettings
from toshokan.testing import serve

SECRET = b"test-secret-0123456789abcdef0123"

SourceFactory = Callable[..., Awaitable[LocalLibrary]]


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


@asynccontextmanager
async def client_for(source: LocalLibrary) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the host serving ``source`` (made by ``make_source``)."""
    yield _clients[id(source)]
