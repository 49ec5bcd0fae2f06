"""Per-client request limits, counted by the ``limits`` library.

Counters live in memory for one process, or in Redis (``limits.storage``)
so that every replica behind a load balancer shares them. Health checks are
exempt so a load balancer is never refused, and so are CORS preflights,
which browsers send on their own.
"""

import re

from starlette.types import ASGIApp, Receive, Scope, Send

from toshokan.app.responses import error_response
from toshokan.core.limits import Limiter

EXEMPT = re.compile(r"^/[a-z]+/health/?$")


class RateLimitMiddleware:
    def __init__(self, app: ASGIApp, limiter: Limiter):
        self.app = app
        self.limiter = limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] == "OPTIONS" or EXEMPT.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        wait = await self.limiter.hit(client[0] if client else "unknown")
        if wait is None:
            await self.app(scope, receive, send)
            return
        response = error_response(
            "RATE_LIMITED",
            f"Too many requests from this address; retry in {round(wait)} s.",
            429,
            {"Retry-After": str(round(wait))},
        )
        await response(scope, receive, send)
