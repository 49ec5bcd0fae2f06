"""Client-side rate limits that keep the whole process under MangaDex's published rates.

MangaDex counts requests per IP address: about 5 per second for the API as a
whole and 40 per minute for ``/at-home/server``. A leaky bucket (the SDK's
default ``aiolimiter`` behaviour) lets a full bucket burst on top of the
steady rate, so over some one-second windows it sends twice the allowance.
:class:`WindowLimiter` instead guarantees that no window of ``period``
seconds ever holds more than ``max_rate`` requests, while still letting a
burst of ``max_rate`` go at once (which is what makes the concurrent chapter
feed fast).

The limiters subclass ``AsyncLimiter`` only so they can be installed as an
:class:`~toshokan.sdk.UpstreamClient`'s ``limiter``: the client then applies
them to every attempt, retries included.

:class:`SharedLimiter` resolves, at each acquisition, the one
:class:`WindowLimiter` of its key (upstream address and budget) for the
running event loop: every request of every MangaDex source in the process
draws on one allowance (the host runs one loop), and tests, each on a fresh
loop, start from a full one.
"""

import asyncio
import logging
import math
import time
import weakref
from collections import deque

from aiolimiter import AsyncLimiter

log = logging.getLogger(__name__)


class WindowLimiter(AsyncLimiter):
    """At most ``max_requests`` acquisitions in any sliding window of ``period`` seconds."""

    def __init__(self, max_requests: int, period: float):
        super().__init__(max_requests, period)
        self.max_requests = max_requests
        self.period = period
        self._sent: deque[float] = deque()
        self._turn = asyncio.Lock()  # first come, first served
        self._paused_until = 0.0

    def pause(self, seconds: float) -> None:
        """MangaDex said to wait this long: hold every request of the budget until then."""
        self._paused_until = max(self._paused_until, time.monotonic() + seconds)

    def paused_for(self) -> float:
        """Seconds left of a pause MangaDex asked for (0 when none)."""
        return max(0.0, self._paused_until - time.monotonic())

    def has_capacity(self, amount: float = 1) -> bool:
        self._forget(time.monotonic())
        return len(self._sent) + amount <= self.max_requests

    async def acquire(self, amount: float = 1) -> None:
        async with self._turn:
            while True:
                now = time.monotonic()
                self._forget(now)
                if len(self._sent) < self.max_requests:
                    self._sent.append(now)
                    return
                await asyncio.sleep(self._sent[0] + self.period - now)

    def _forget(self, now: float) -> None:
        while self._sent and now - self._sent[0] >= self.period:
            self._sent.popleft()


class AllOf(AsyncLimiter):
    """Acquire several limiters in order: an at-home request counts against both budgets."""

    def __init__(self, *limiters: AsyncLimiter):
        super().__init__(1, 1)
        self.limiters = limiters

    async def acquire(self, amount: float = 1) -> None:
        for limiter in self.limiters:
            await limiter.acquire(amount)


def window_for_rate(rate: float) -> tuple[int, float]:
    """A (possibly fractional) rate as a window: 5/s is 5 per 1 s, 2.5/s is 2 per 0.8 s."""
    count = max(1, math.floor(rate))
    return count, count / rate


class SharedLimiter(AsyncLimiter):
    """A handle on the process-wide :class:`WindowLimiter` of ``key``."""

    def __init__(self, key: str, max_requests: int, period: float):
        super().__init__(max_requests, period)
        self.key = key
        self.max_requests = max_requests
        self.period = period

    def resolve(self) -> "WindowLimiter":
        return shared_limiter(self.key, self.max_requests, self.period)

    async def acquire(self, amount: float = 1) -> None:
        await self.resolve().acquire(amount)


_shared: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, WindowLimiter]]" = (
    weakref.WeakKeyDictionary()
)


def shared_limiter(key: str, max_requests: int, period: float) -> WindowLimiter:
    """The process's limiter for ``key`` (an upstream address and budget name).

    The first caller's rate wins; a later caller asking for a different one is
    told so in the log rather than silently getting a second allowance.
    Must be called with an event loop running.
    """
    per_loop = _shared.setdefault(asyncio.get_running_loop(), {})
    limiter = per_loop.get(key)
    if limiter is None:
        limiter = per_loop[key] = WindowLimiter(max_requests, period)
    elif (limiter.max_requests, limiter.period) != (max_requests, period):
        log.warning(
            "rate limit for %s is already %s per %.2fs; ignoring %s per %.2fs",
            key,
            limiter.max_requests,
            limiter.period,
            max_requests,
            period,
        )
    return limiter
