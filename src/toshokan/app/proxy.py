"""Believe ``X-Forwarded-*`` headers only from the proxies the operator trusts.

uvicorn's own proxy middleware handles ``-For`` and ``-Proto`` but not
``-Host``, which page URLs need behind a proxy; this one does all three.
Behind a chain of proxies the client is the right-most address that is not
itself a trusted proxy, so a client cannot spoof its address by sending its
own ``X-Forwarded-For``.
"""

import ipaddress
from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(entries: Iterable[str]) -> list[Network] | None:
    """Networks from addresses or CIDRs; None means every peer is trusted (``*``)."""
    entries = list(entries)
    if "*" in entries:
        return None
    return [ipaddress.ip_network(e.strip(), strict=False) for e in entries]


class TrustedProxyMiddleware:
    def __init__(self, app: ASGIApp, trusted: Iterable[str]):
        self.app = app
        self.networks = parse_networks(trusted)

    def trusts(self, address: str | None) -> bool:
        if address is None:
            return False
        if self.networks is None:
            return True
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in net for net in self.networks)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("client") and self.trusts(scope["client"][0]):
            scope = self._forwarded(scope)
        await self.app(scope, receive, send)

    def _forwarded(self, scope: Scope) -> Scope:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        scope = dict(scope)
        chain = [h.strip() for h in headers.get("x-forwarded-for", "").split(",") if h.strip()]
        if chain:
            client = next((hop for hop in reversed(chain) if not self.trusts(hop)), chain[0])
            scope["client"] = (client, 0)
        proto = headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
        if proto in ("http", "https"):
            scope["scheme"] = proto
        host = headers.get("x-forwarded-host", "").split(",")[0].strip()
        if host:
            kept = [(k, v) for k, v in scope["headers"] if k.lower() != b"host"]
            scope["headers"] = [*kept, (b"host", host.encode("latin-1"))]
        return scope
