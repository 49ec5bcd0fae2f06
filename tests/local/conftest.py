"""Fixtures: sample libraries, a started source, and a tiny app mounting its routes."""

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount

from toshokan.errors import HostError
from toshokan.sdk import HostServices
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library

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


@pytest.fixture
async def make_source(tmp_path: Path) -> AsyncIterator[SourceFactory]:
    started: list[LocalLibrary] = []

    async def make(root: Path, slug: str = "local", **options: Any) -> LocalLibrary:
        options.setdefault("watch", False)
        settings = LocalSettings(root=root, **options)
        source = LocalLibrary(slug, settings, services(tmp_path))
        await source.startup()
        started.append(source)
        return source

    yield make
    for source in started:
        await source.shutdown()


@pytest.fixture
async def demo_source(make_source: SourceFactory, demo_root: Path) -> LocalLibrary:
    return await make_source(demo_root)


async def _host_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, HostError)
    return JSONResponse(
        {"error": {"code": error.code, "message": error.message}},
        status_code=error.status,
        headers=error.headers,
    )


def app_for(source: LocalLibrary) -> Starlette:
    app = Starlette(routes=[Mount(f"/_/{source.slug}", routes=list(source.routes()))])
    app.add_exception_handler(HostError, _host_error)
    return app


def client_for(source: LocalLibrary) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app_for(source))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver")
