"""Building a host around test adapters, in process."""

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.core.catalog import Catalog, CatalogSettings
from toshokan.core.host import Host
from toshokan.testing import serve_host

HostFactory = Callable[..., Any]


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
    """``async with make_client(sources=..., **settings) as (client, host)``."""

    @asynccontextmanager
    async def factory(
        sources: dict[str, dict[str, Any]] | None = None,
        client_ip: str = "203.0.113.7",
        **settings: Any,
    ) -> AsyncIterator[tuple[httpx.AsyncClient, Host]]:
        async with serve_host(
            catalog_sources(sources),
            data_dir=tmp_path,
            client_ip=client_ip,
            base_url="http://testhost",
            **settings,
        ) as served:
            yield served.client, served.core.host

    return factory
