"""Serve adapters in-process, against a fake upstream, the way readers reach them.

For adapter authors' tests (and toshokan's own)::

    from toshokan.testing import serve

    async def test_search(tmp_path):
        async with serve(MyShelf, {"api_url": "https://shelf.example/api"},
                         upstream=fake_shelf_app, data_dir=tmp_path) as host:
            answer = await host.client.post("/shelf/search", json={"page": 1, "sort": "title"})
            assert answer.status_code == 200

The whole host runs (validation, authorisation, cache, errors, the source's
own routes), in the same process, with no socket. ``upstream`` is where every
request of the adapter's :meth:`~toshokan.sdk.HostServices.http_client` goes
instead of the network: an ASGI app (a Starlette fake of the upstream) or any
httpx transport (``httpx.MockTransport``).
"""

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from asgi_lifespan import LifespanManager
from pydantic import BaseModel
from starlette.applications import Starlette

from toshokan.application import create_app
from toshokan.config import READERS_AUTH, load_settings
from toshokan.core import Core, HostedSource, HostedSources
from toshokan.core.hosted import host_services
from toshokan.models import SourceStatus
from toshokan.sdk import HostServices, Source

#: A source to serve: its adapter class, its settings, and optionally its status.
SourceSpec = (
    tuple[type[Source[Any]], Mapping[str, Any] | BaseModel]
    | tuple[type[Source[Any]], Mapping[str, Any] | BaseModel, str]
)


@dataclass
class ServedHost:
    """A running host: a client to it, its core, and the sources by slug."""

    client: httpx.AsyncClient
    core: Core
    app: Starlette

    @property
    def services(self) -> HostServices:
        return self.core.sources.services

    def source(self, slug: str) -> Any:
        return self.core.sources.by_slug[slug].source


def _transport(upstream: Any) -> httpx.AsyncBaseTransport | None:
    if upstream is None or isinstance(upstream, httpx.AsyncBaseTransport):
        return upstream
    return httpx.ASGITransport(app=upstream)


def build_app(
    sources: Mapping[str, SourceSpec], *, upstream: Any = None, data_dir: Path, **settings: Any
) -> Starlette:
    """The host's ASGI app serving ``sources`` (slug to spec), not yet started.

    For tools that drive an ASGI app themselves (schemathesis, Starlette's
    ``TestClient``); :func:`serve_host` starts it and hands back a client.
    """
    settings.setdefault("host", {}).setdefault("data_dir", str(data_dir))
    settings["host"].setdefault("secret", "test-secret-0123456789abcdef")
    config = load_settings(None, **settings)
    services = host_services(config, upstream_transport=_transport(upstream))
    hosted = []
    for slug, (adapter, options, *status) in sources.items():
        readers = False
        if not isinstance(options, BaseModel):
            # ``auth = "readers"`` is the host's, as in a [sources.<slug>] table.
            readers = options.get("auth") == READERS_AUTH
            kept = {key: value for key, value in options.items() if not (readers and key == "auth")}
            options = adapter.Settings.model_validate(kept)
        source = adapter(slug, options, services.for_source(slug))
        state = SourceStatus(status[0]) if status else SourceStatus.ACTIVE
        hosted.append(HostedSource(slug=slug, status=state, source=source, accepts_readers=readers))
    return create_app(config, HostedSources(config, services, hosted))


@asynccontextmanager
async def serve_host(
    sources: Mapping[str, SourceSpec],
    *,
    upstream: Any = None,
    data_dir: Path,
    client_ip: str = "203.0.113.7",
    base_url: str = "http://testserver",
    **settings: Any,
) -> AsyncIterator[ServedHost]:
    """Serve several sources (slug to spec) with host ``settings`` (``limits={...}``...)."""
    app = build_app(sources, upstream=upstream, data_dir=data_dir, **settings)
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app, client=(client_ip, 1234))
        async with httpx.AsyncClient(transport=transport, base_url=base_url) as client:
            yield ServedHost(client=client, core=app.state.core, app=app)


@asynccontextmanager
async def serve(
    adapter: type[Source[Any]],
    options: Mapping[str, Any] | BaseModel | None = None,
    *,
    slug: str = "test",
    upstream: Any = None,
    data_dir: Path,
    **settings: Any,
) -> AsyncIterator[ServedHost]:
    """Serve one adapter as source ``slug``; see the module docstring."""
    spec = (adapter, options if options is not None else {})
    async with serve_host({slug: spec}, upstream=upstream, data_dir=data_dir, **settings) as served:
        yield served
