"""What the host hands an adapter: services at start-up, a context per request."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from toshokan.sdk.http import UpstreamClient
from toshokan.sdk.observe import Observers


@dataclass(frozen=True)
class RequestContext:
    """Per-request facts an adapter may need.

    ``auth`` holds only the authentication headers the client sent for this
    source's auth type (``Authorization``, ``Cookie`` or ``X-API-Key``), so an
    adapter can forward them upstream without seeing anything else.
    ``base_url`` is the host's public address (no trailing slash), for adapters
    that link back to the host itself, such as page images it serves.
    """

    base_url: str = "http://localhost"
    auth: Mapping[str, str] = field(default_factory=dict)


@dataclass
class HostServices:
    """Shared facilities of the host process, given to every adapter at construction."""

    user_agent: str
    data_dir: Path
    secret: bytes
    public_url: str | None = None
    http_timeout: float = 15.0
    #: Where upstream requests go instead of the network: a test's fake upstream.
    upstream_transport: httpx.AsyncBaseTransport | None = None
    #: Who the host's figures count this adapter's upstream requests and scans for: its source
    #: slug in the services a source is given (:meth:`for_source`), the host's name otherwise.
    source: str = "host"
    #: Where upstream clients and scans report what they do, for the host's metrics.
    observers: Observers = field(default_factory=Observers)
    _clients: list[UpstreamClient] = field(default_factory=list)
    _change_listeners: list[Callable[[str], None]] = field(default_factory=list)
    _signers: dict[str, Callable[[str], str]] = field(default_factory=dict)

    def for_source(self, source_slug: str) -> "HostServices":
        """These services as source ``source_slug`` is given them: the same clients, listeners
        and observers, with its upstream requests counted under its slug."""
        return replace(self, source=source_slug)

    def sign_links(self, source_slug: str, signer: Callable[[str], str]) -> None:
        """Have links to ``source_slug``'s own routes signed by ``signer(path) -> query``.

        The host calls this at start-up for every source that requires
        authentication: image loaders send no credentials, so such links carry
        an expiring signature instead, which the host checks before the route runs.
        """
        self._signers[source_slug] = signer

    def link_query(self, source_slug: str, path: str) -> str | None:
        """The signature query for a link to ``path``, or None when the source's links are open."""
        signer = self._signers.get(source_slug)
        return None if signer is None else signer(path)

    def on_content_changed(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(source_slug)`` whenever a source reports that its content changed."""
        self._change_listeners.append(listener)

    def content_changed(self, source_slug: str) -> None:
        for listener in self._change_listeners:
            listener(source_slug)

    def http_client(self, base_url: str = "", **options: Any) -> UpstreamClient:
        """An upstream client with the host's User-Agent and timeouts; closed by the host."""
        options.setdefault("timeout", self.http_timeout)
        options.setdefault("source", self.source)
        options.setdefault("observers", self.observers)
        if self.upstream_transport is not None:
            options.setdefault("transport", self.upstream_transport)
        client = UpstreamClient(base_url, user_agent=self.user_agent, **options)
        self._clients.append(client)
        return client

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()
        self._clients.clear()
