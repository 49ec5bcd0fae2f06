"""Cross-origin access as DECISIONS.md rules it, with every header value computed once.

Preflights answer 204, and a refused origin the Error object, which
Starlette's own CORS middleware does not do.
"""

from collections.abc import Iterable

Headers = list[tuple[bytes, bytes]]
METHODS = b"GET, POST, OPTIONS"
# Scripts of other origins may read these: ETag for conditional requests, Retry-After after a
# 429, X-Request-Id to quote a failing request's id (the one its log lines carry).
EXPOSE = (b"access-control-expose-headers", b"ETag, Retry-After, X-Request-Id")


class Cors:
    def __init__(
        self, origins: Iterable[str], tools_origin: str | None, auth_headers: Iterable[str]
    ):
        origins = list(origins)
        self.any_origin = "*" in origins
        self.origins = {o.rstrip("/") for o in origins if o != "*"}
        if tools_origin:
            self.origins.add(tools_origin.rstrip("/"))
        allow = ", ".join(dict.fromkeys(["Content-Type", "Authorization", *auth_headers]))
        self._any: Headers = [(b"access-control-allow-origin", b"*"), EXPOSE]
        self._preflight_extra: Headers = [
            (b"access-control-allow-methods", METHODS),
            (b"access-control-allow-headers", allow.encode("latin-1")),
            (b"access-control-max-age", b"86400"),
        ]

    def headers(self, origin: bytes | None) -> Headers:
        """What an answer to a request from ``origin`` carries; nothing when it is not allowed."""
        if origin is None:
            return []
        if self.any_origin:
            return self._any
        if origin.decode("latin-1").rstrip("/") not in self.origins:
            return []
        return [(b"access-control-allow-origin", origin), (b"vary", b"Origin"), EXPOSE]

    def preflight(self, origin: bytes | None) -> Headers | None:
        """The 204 answer's headers, or None when the origin may not call the host."""
        allowed = self.headers(origin)
        if not allowed:
            return None
        return [*allowed[:-1], *self._preflight_extra]
