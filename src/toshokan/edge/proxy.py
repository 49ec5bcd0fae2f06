"""Believe ``X-Forwarded-*`` headers only from the proxies the operator trusts.

Whether a peer is trusted is decided once per peer address and remembered,
and nothing is parsed at all when a request carries no forwarded header.
Behind a chain of proxies the client is the right-most address that is not
itself a trusted proxy, so a client cannot spoof its address by sending its
own ``X-Forwarded-For``.
"""

import ipaddress
from collections.abc import Iterable

from starlette.types import Scope

from toshokan.edge.accesslog import escaped

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
#: Peers whose trust is remembered; beyond this the memo starts afresh (bounded memory).
MEMO_SIZE = 4096
FORWARDED = frozenset({b"x-forwarded-for", b"x-forwarded-proto", b"x-forwarded-host"})


class TrustedProxies:
    def __init__(self, entries: Iterable[str]):
        entries = [e.strip() for e in entries]
        self.everyone = "*" in entries
        self.networks: list[Network] = [
            ipaddress.ip_network(e, strict=False) for e in entries if e != "*"
        ]
        self._memo: dict[str, bool] = {}

    def trusts(self, address: str | None) -> bool:
        if address is None:
            return False
        known = self._memo.get(address)
        if known is None:
            known = self._decide(address)
            if len(self._memo) >= MEMO_SIZE:
                self._memo.clear()
            self._memo[address] = known
        return known

    def _decide(self, address: str) -> bool:
        if self.everyone:
            return True
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in net for net in self.networks)

    def resolve(self, scope: Scope) -> Scope:
        """``scope`` with client, scheme and host as the trusted proxy forwarded them."""
        forwarded: dict[bytes, str] = {}
        for name, value in scope["headers"]:
            if name in FORWARDED:
                forwarded[name] = value.decode("latin-1")
        scope = dict(scope)
        hops = forwarded.get(b"x-forwarded-for", "").split(",")
        chain = [hop.strip() for hop in hops if hop.strip()]
        if chain:
            client = next((hop for hop in reversed(chain) if not self.trusts(hop)), chain[0])
            scope["client"] = (escaped(client[:100]), 0)  # it is written to the access log
        proto = forwarded.get(b"x-forwarded-proto", "").split(",")[0].strip().lower()
        if proto in ("http", "https"):
            scope["scheme"] = proto
        host = forwarded.get(b"x-forwarded-host", "").split(",")[0].strip()
        if host:
            kept = [(k, v) for k, v in scope["headers"] if k != b"host"]
            scope["headers"] = [*kept, (b"host", host.encode("latin-1"))]
        return scope
