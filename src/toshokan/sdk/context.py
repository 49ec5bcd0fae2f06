"""What the host hands an adapter: services at start-up, a context per request."""

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import httpx

from toshokan.sdk.claims import Claims
from toshokan.sdk.http import UpstreamClient
from toshokan.sdk.observe import Observers
from toshokan.sdk.urls import LinkSigner, Urls


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


class SharedSecrets(Protocol):
    """Small secrets every process of the host can read back (a reader's upstream sign-in).

    The host encrypts them with its secret before they leave the process. A
    secret may be gone before its time (the store was unreachable, or restarted):
    an adapter treats :meth:`find` returning None as "not known here".
    """

    async def keep(self, name: str, value: bytes, seconds: int) -> None: ...

    async def find(self, name: str) -> bytes | None: ...


class Exclusive(Protocol):
    """Runs work that one process of the whole host at a time may do (a library scan)."""

    def __call__(self, name: str) -> AbstractAsyncContextManager[None]: ...


@asynccontextmanager
async def _this_process_only(name: str) -> AsyncIterator[None]:
    yield


#: Set by ``toshokan serve`` (to its own process id) for itself and the worker processes it
#: starts, which inherit it: processes with the same value are one host's, and may share
#: what only one host may use (a library's index).
SERVE_ID = "TOSHOKAN_SERVE_ID"


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
    #: Claims (slugs, first-seen times) shared by every replica (``[cluster] database``);
    #: None when each source keeps its own, as a lone host does.
    claims: Claims | None = None
    #: Secrets shared by every process of the host (``[cluster] redis``); None: this one's only.
    shared_secrets: SharedSecrets | None = None
    #: ``async with exclusive(name)``: one process of the whole host at a time; without
    #: ``[cluster] redis``, at once (each process is on its own).
    exclusive: Exclusive = _this_process_only
    #: Who the host's figures count this adapter's upstream requests and scans for: its source
    #: slug in the services a source is given (:meth:`for_source`), the host's name otherwise.
    source: str = "host"
    #: Where upstream clients and scans report what they do, for the host's metrics.
    observers: Observers = field(default_factory=Observers)
    _clients: list[UpstreamClient] = field(default_factory=list)
    _change_listeners: list[Callable[[str], None]] = field(default_factory=list)
    #: How the host signs its links (set by the host before it serves).
    link_signer: LinkSigner | None = None
    _signed_sources: set[str] = field(default_factory=set)
    #: The copies :meth:`for_source` handed out, which :meth:`provide` reaches too.
    _copies: list["HostServices"] = field(default_factory=list)

    def for_source(self, source_slug: str) -> "HostServices":
        """These services as source ``source_slug`` is given them: the same clients, listeners
        and observers, with its upstream requests counted under its slug."""
        services = replace(self, source=source_slug)
        self._copies.append(services)
        return services

    def provide(self, **facilities: Any) -> None:
        """Set facilities the host makes after its sources (the link signer, shared secrets,
        leases) here and in every source's copy of these services, so no source is left
        with the value its copy was made with."""
        for services in (self, *self._copies):
            for name, value in facilities.items():
                setattr(services, name, value)

    def sign_links(self, source_slug: str) -> None:
        """Have links to ``source_slug``'s own routes signed.

        The host calls this at start-up for every source that requires
        authentication: image loaders send no credentials, so such links carry
        an expiring signature instead, which the host checks before the route runs.
        """
        self._signed_sources.add(source_slug)

    def urls(self, base_url: str | None = None) -> Urls:
        """The host's link builder on ``base_url`` (the address a request reached the host
        at), or on the host's public address when there is no request."""
        address = (self.public_url or "") if base_url is None else base_url
        return Urls(address, self.link_signer, self._signed_sources)

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
        if self.claims is not None:
            self.claims.close()
