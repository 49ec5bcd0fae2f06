"""Per-client budgets: an O(1) counter in memory, or the shared store when it is Redis.

In memory, each client costs one float: the generic cell rate algorithm
keeps the time at which the client's budget is next full again (its
"theoretical arrival time"). A client may spend the whole budget at once,
then one request per ``60 / per_minute`` seconds; ``Retry-After`` is exact.
With a Redis (``[limits] storage`` or ``[cluster] redis``) the moving window
of the ``limits`` library counts there, so that every replica and worker
shares one budget; while that Redis does not answer, each process counts alone.
"""

import time
from typing import Protocol

from toshokan.core.limits import MovingWindowLimit
from toshokan.core.shared import SharedRedis

#: Clients remembered per budget; past this, idle ones are forgotten first (bounded memory).
MAX_CLIENTS = 100_000


class ClientBudget(Protocol):
    async def hit(self, key: str) -> float | None:
        """Count one request; None when allowed, else seconds until the client may retry."""


class LocalBudget:
    """The generic cell rate algorithm over a dict: O(1) per request, one float per client."""

    def __init__(self, per_minute: int, max_clients: int = MAX_CLIENTS):
        self.interval = 60.0 / per_minute
        self.burst = 60.0 - self.interval
        self.max_clients = max_clients
        self._full_at: dict[str, float] = {}

    def take(self, key: str, now: float) -> float | None:
        full_at = self._full_at.get(key)
        if full_at is None or full_at < now:
            full_at = now
            if key not in self._full_at and len(self._full_at) >= self.max_clients:
                self._forget(now)
        wait = full_at - now - self.burst
        if wait > 0:
            return wait
        self._full_at[key] = full_at + self.interval
        return None

    async def hit(self, key: str) -> float | None:
        return self.take(key, time.monotonic())

    def _forget(self, now: float) -> None:
        """Drop clients whose budget is full again; if too few were, the oldest quarter too."""
        self._full_at = {k: t for k, t in self._full_at.items() if t > now}
        if len(self._full_at) > self.max_clients * 3 // 4:
            keep = list(self._full_at.items())[self.max_clients // 4 :]
            self._full_at = dict(keep)


class SharedBudget:
    """A moving window in the shared Redis, used by every process while that Redis answers."""

    def __init__(self, per_minute: int, shared: SharedRedis, namespace: str):
        self.limiter = MovingWindowLimit(per_minute, namespace, shared)

    async def hit(self, key: str) -> float | None:
        return await self.limiter.hit(key)


def budget(per_minute: int, shared: SharedRedis | None, namespace: str) -> ClientBudget | None:
    """The budget for ``per_minute`` requests per client; None when 0 (unlimited).

    ``shared`` is the Redis of ``[limits] storage``; None counts in this process's memory.
    """
    if per_minute <= 0:
        return None
    if shared is None:
        return LocalBudget(per_minute)
    return SharedBudget(per_minute, shared, namespace)
