"""Building a host around test adapters, in process."""

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager

from tests.core.catalog import Catalog, CatalogSettings
from toshokan.app import create_app
from toshokan.app.host import Host, HostedSource
from toshokan.config import load_settings
from toshokan.models import SourceStatus
from toshokan.sdk import HostServices

HostFactory = Callable[..., Any]


def build_host(
    tmp_path: Path, sources: dict[str, dict[str, Any]] | None = None, **settings: Any
) -> Host:
    settings.setdefault("host", {}).setdefault("data_dir", str(tmp_path))
    config = load_settings(None, **settings)
    services = HostServices(user_agent="toshokan-test", data_dir=tmp_path, secret=b"k" * 32)
    hosted = []
    for slug, options in (sources or {"catalog": {}}).items():
        options = dict(options)
        status = SourceStatus(options.pop("status", "active"))
        source = Catalog(slug, CatalogSettings(**options), services)
        hosted.append(HostedSource(slug=slug, adapter_name="catalog", status=status, source=source))
    return Host(config, services, hosted)


@pytest.fixture
def make_client(tmp_path: Path) -> Callable[..., Any]:
    """``async with make_client(sources=..., **settings) as (client, host)``."""
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def factory(
        sources: dict[str, dict[str, Any]] | None = None,
        client_ip: str = "203.0.113.7",
        **settings: Any,
    ) -> AsyncIterator[tuple[httpx.AsyncClient, Host]]:
        host = build_host(tmp_path, sources, **settings)
        app = create_app(host.settings, host)
        async with LifespanManager(app) as manager:
            transport = httpx.ASGITransport(app=manager.app, client=(client_ip, 1234))
            async with httpx.AsyncClient(transport=transport, base_url="http://testhost") as client:
                yield client, host

    return factory
