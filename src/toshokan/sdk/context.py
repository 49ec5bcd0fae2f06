"""What the host hands an adapter: services at start-up, a context per request."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toshokan.sdk.http import UpstreamClient


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
    _clients: list[UpstreamClient] = field(default_factory=list)

    def http_client(self, base_url: str = "", **options: Any) -> UpstreamClient:
        """An upstream client with the host's User-Agent and timeouts; closed by the host."""
        options.setdefault("timeout", self.http_timeout)
        client = UpstreamClient(base_url, user_agent=self.user_agent, **options)
        self._clients.append(client)
        return client

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()
        self._clients.clear()
