"""Moving-window limits per key, counted by the ``limits`` library.

Counters live in memory for one process, or in Redis (``[limits] storage``,
else ``[cluster] redis``) so that every replica behind a load balancer shares
them. The edge counts requests per client with one; the core counts
authentication attempts with another. When that Redis does not answer, each
process counts in its own memory until it does (its breaker says when): a
limit counted per process for a while is better than a request that fails.
"""

import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from limits import RateLimitItem, RateLimitItemPerMinute
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

from toshokan.core.shared import SharedRedis, Unavailable
from toshokan.core.shared.connection import client_options

T = TypeVar("T")


def async_storage_uri(uri: str) -> str:
    return uri if uri.startswith("async+") else f"async+{uri}"


def memory_strategy() -> MovingWindowRateLimiter:
    return MovingWindowRateLimiter(storage_from_string("async+memory://"))


def redis_strategy(uri: str) -> MovingWindowRateLimiter:
    # redis-py rather than limits' default client: it is the one most deployments already have.
    storage = storage_from_string(
        async_storage_uri(uri), implementation="redispy", **client_options()
    )
    return MovingWindowRateLimiter(storage)


class MovingWindowLimit:
    """A moving-window limit per key, shared by the rate-limit middleware and auth attempts.

    With ``shared`` (the Redis of ``[limits] storage``) the counts are that Redis's,
    while its breaker says it answers; otherwise, and meanwhile, this process's own.
    """

    def __init__(
        self, per_minute: int, namespace: str = "toshokan", shared: SharedRedis | None = None
    ):
        self.item: RateLimitItem = RateLimitItemPerMinute(per_minute, namespace=namespace)
        self.local = memory_strategy()
        self.shared = shared
        self.remote = redis_strategy(shared.url) if shared is not None else None

    async def hit(self, key: str, cost: int = 1) -> float | None:
        """Count one request (``cost`` of them); None when allowed, else seconds until the
        client may retry."""
        if await self._counted(lambda s: s.hit(self.item, key, cost=cost)):
            return None
        return await self.retry_after(key)

    async def exceeded(self, key: str) -> float | None:
        """Like :meth:`hit` without counting: None when another request would be allowed."""
        if await self._counted(lambda s: s.test(self.item, key)):
            return None
        return await self.retry_after(key)

    async def retry_after(self, key: str) -> float:
        stats = await self._counted(lambda s: s.get_window_stats(self.item, key))
        return max(1.0, stats.reset_time - time.time())

    async def _counted(self, operation: Callable[[MovingWindowRateLimiter], Awaitable[T]]) -> T:
        shared, remote = self.shared, self.remote
        if shared is not None and remote is not None:
            with contextlib.suppress(Unavailable):
                return await shared.run(lambda _client: operation(remote))
        return await operation(self.local)
