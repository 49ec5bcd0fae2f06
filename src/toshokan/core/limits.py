"""Moving-window limits per key, counted by the ``limits`` library.

Counters live in memory for one process, or in Redis (``[limits] storage``)
so that every replica behind a load balancer shares them. The edge counts
requests per client with one; the core counts authentication attempts with
another.
"""

import time

from limits import RateLimitItem, RateLimitItemPerMinute
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string


def async_storage_uri(uri: str) -> str:
    return uri if uri.startswith("async+") else f"async+{uri}"


class MovingWindowLimit:
    """A moving-window limit per key, shared by the rate-limit middleware and auth attempts."""

    def __init__(
        self, per_minute: int, storage_uri: str = "memory://", namespace: str = "toshokan"
    ):
        self.item: RateLimitItem = RateLimitItemPerMinute(per_minute, namespace=namespace)
        uri = async_storage_uri(storage_uri)
        # redis-py rather than limits' default client: it is the one most deployments already have.
        options = {"implementation": "redispy"} if uri.startswith("async+redis") else {}
        self.strategy = MovingWindowRateLimiter(storage_from_string(uri, **options))

    async def hit(self, key: str) -> float | None:
        """Count one request; None when allowed, else seconds until the client may retry."""
        if await self.strategy.hit(self.item, key):
            return None
        return await self.retry_after(key)

    async def exceeded(self, key: str) -> float | None:
        """Like :meth:`hit` without counting: None when another request would be allowed."""
        if await self.strategy.test(self.item, key):
            return None
        return await self.retry_after(key)

    async def retry_after(self, key: str) -> float:
        stats = await self.strategy.get_window_stats(self.item, key)
        return max(1.0, stats.reset_time - time.time())
