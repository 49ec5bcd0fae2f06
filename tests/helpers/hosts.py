"""Hosts for tests, in process: around the test catalog, ``make_client`` for the spec's routes
and ``make_host`` for a catalog with page images of its own (fixtures of every folder,
registered by the root conftest); ``serve_library`` for a local library; ``add_reader``."""

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from tests.helpers.catalog import Catalog, CatalogSettings
from toshokan.core.hosted import HostedSources
from toshokan.sources.local import LocalLibrary, LocalSettings
from toshokan.testing import ServedHost, serve_host


def catalog_sources(sources: dict[str, dict[str, Any]] | None) -> dict[str, Any]:
    """Catalog test sources by slug; a source's options may carry its ``status``."""
    specs: dict[str, Any] = {}
    for slug, options in (sources or {"catalog": {}}).items():
        options = dict(options)
        status = options.pop("status", "active")
        specs[slug] = (Catalog, CatalogSettings(**options), status)
    return specs


@pytest.fixture
def make_client(tmp_path: Path) -> Callable[..., Any]:
    """``async with make_client(sources=..., **settings) as (client, hosted_sources)``."""

    @asynccontextmanager
    async def factory(
        sources: dict[str, dict[str, Any]] | None = None,
        client_ip: str = "203.0.113.7",
        **settings: Any,
    ) -> AsyncIterator[tuple[httpx.AsyncClient, HostedSources]]:
        async with serve_host(
            catalog_sources(sources),
            data_dir=tmp_path,
            client_ip=client_ip,
            base_url="http://testhost",
            **settings,
        ) as served:
            yield served.client, served.core.sources

    return factory


class Illustrated(Catalog):
    """The catalog with page images under ``/_/<slug>/pages/{n}``."""

    def routes(self) -> Sequence[BaseRoute]:
        return [Route("/pages/{n}", self.page, methods=["GET"], name="page")]

    async def page(self, request: Request) -> Response:
        return Response(b"\x89PNG fake", media_type="image/png")


@pytest.fixture
def make_host(tmp_path: Path) -> Callable[..., Any]:
    """``async with make_host(**settings) as host``: source ``catalog``, client 203.0.113.7."""

    @asynccontextmanager
    async def factory(
        client_ip: str = "203.0.113.7", auth: str = "none", required: bool = False, **settings: Any
    ) -> AsyncIterator[ServedHost]:
        options = CatalogSettings(auth=auth, required=required)
        async with serve_host(
            {"catalog": (Illustrated, options)},
            data_dir=tmp_path,
            client_ip=client_ip,
            base_url="http://testhost",
            **settings,
        ) as served:
            yield served

    return factory


def serve_library(
    library: Path, data_dir: Path, **settings: Any
) -> AbstractAsyncContextManager[ServedHost]:
    """The library served as ``local`` from ``data_dir``, with host ``settings``; no rate
    limit unless set."""
    spec = (LocalLibrary, LocalSettings(root=library, watch=False))
    settings.setdefault("limits", {"rate_limit": 0})
    return serve_host({"local": spec}, data_dir=data_dir, **settings)


async def add_reader(host: ServedHost, name: str, password: str) -> str:
    """Create a reader; their first API key."""
    return await asyncio.to_thread(host.core.readers.readers.add, name, password)
