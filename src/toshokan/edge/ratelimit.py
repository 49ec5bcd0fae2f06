"""Per-client budgets: an O(1) counter in memory, or the shared store when it is Redis.

In memory, each client costs one float: the generic cell rate algorithm
keeps the time at which the client's budget is next full again (its
"theoretical arrival time"). A client may spend the whole budget at once,
then one request per ``60 / per_minute`` seconds; ``Retry-After`` is exact.
With a Redis (``[limits] storage`` or ``[cluster] redis``) the moving window
of the ``limits`` library counts there, so that every replica and worker
shares one budget; while that Redis does not answer, each process counts alone.

A request costs :data:`FULL`; one that sends no content back costs :data:`LIGHT`,
a tenth: a ``HEAD`` (KOReader asks one before every catalogue ``GET``, to check
its cache) and a conditional ``GET`` answered ``304``. A conditional ``GET`` is
charged light first and the rest once its answer turns out to be a full one.
"""

import time
from typing import Protocol

from toshokan.core.limits import MovingWindowLimit
from toshokan.core.shared import SharedRedis

#: Clients remembered per budget; past this, idle ones are forgotten first (bounded memory).
MAX_CLIENTS = 100_000
#: What a request costs, in tenths of the budget's unit: one with content, one without.
FULL = 10
LIGHT = 1
#: Seconds a whole budget lasts.
WINDOW = 60.0


class ClientBudget(Protocol):
    async def hit(self, key: str, cost: int = FULL) -> float | None:
        """Count one request of ``cost``; None when allowed, else seconds until the client may
        retry."""


class LocalBudget:
    """The generic cell rate algorithm over a dict: O(1) per request, one float per client."""

    def __init__(self, per_minute: int, max_clients: int = MAX_CLIENTS):
        self.interval = 60.0 / per_minute
        #: What a request of each cost (0 to FULL tenths) adds to its client's time, computed
        #: once rather than for every request.
        self._steps = tuple(self.interval * cost / FULL for cost in range(FULL + 1))
        self.max_clients = max_clients
        self._full_at: dict[str, float] = {}

    def take(self, key: str, now: float, cost: int = FULL) -> float | None:
        full_at = self._full_at.get(key)
        if full_at is None:  # a client not remembered: room made for it first
            full_at = now
            if len(self._full_at) >= self.max_clients:
                self._forget(now)
        elif full_at < now:
            full_at = now
        # Allowed while the budget, spent by this request too, is at most one minute deep.
        spent = full_at + self._steps[cost]
        wait = spent - now - WINDOW
        if wait > 1e-9:  # a tenth's rounding is no reason to refuse
            return wait
        self._full_at[key] = spent
        return None

    async def hit(self, key: str, cost: int = FULL) -> float | None:
        return self.take(key, time.monotonic(), cost)

    def _forget(self, now: float) -> None:
        """Drop clients whose budget is full again; if too few were, the oldest quarter too."""
        self._full_at = {k: t for k, t in self._full_at.items() if t > now}
        if len(self._full_at) > self.max_clients * 3 // 4:
            keep = list(self._full_at.items())[self.max_clients // 4 :]
            self._full_at = dict(keep)


class SharedBudget:
    """A moving window in the shared Redis, used by every process while that Redis answers."""

    def __init__(self, per_minute: int, shared: SharedRedis, namespace: str):
        # Counted in tenths, so that a light request is one of them.
        self.limiter = MovingWindowLimit(per_minute * FULL, f"{namespace}-tenths", shared)

    async def hit(self, key: str, cost: int = FULL) -> float | None:
        return await self.limiter.hit(key, cost)


def budget(per_minute: int, shared: SharedRedis | None, namespace: str) -> ClientBudget | None:
    """The budget for ``per_minute`` requests per client; None when 0 (unlimited).

    ``shared`` is the Redis of ``[limits] storage``; None counts in this process's memory.
    """
    if per_minute <= 0:
        return None
    if shared is None:
        return LocalBudget(per_minute)
    return SharedBudget(per_minute, shared, namespace)
