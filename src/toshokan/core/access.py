"""Counting authentication attempts.

Every path that checks credentials (authenticate, content endpoints, a
source's own routes) goes through one :class:`AttemptGate` per host, so a
client guessing passwords is stopped after ``[limits] auth_attempts`` failures
a minute per source, however many requests it sends at once: the checks of
one client and source run one at a time, each only after the count allowed it.
"""

import asyncio
from collections.abc import Awaitable, Callable

from toshokan.core.limits import MovingWindowLimit
from toshokan.errors import HostError, RateLimited


class AttemptGate:
    def __init__(self, limiter: MovingWindowLimit):
        self.limiter = limiter
        self._locks: dict[str, tuple[asyncio.Lock, list[int]]] = {}

    async def check(self, key: str, attempt: Callable[[], Awaitable[None]]) -> None:
        """Run ``attempt`` unless ``key`` is over its limit; count it when it fails.

        ``attempt`` raises a :class:`HostError` to fail. An upstream's own
        ``RATE_LIMITED`` is passed on without counting against the client.
        """
        lock, users = self._locks.setdefault(key, (asyncio.Lock(), [0]))
        users[0] += 1
        try:
            async with lock:
                await self.refuse_if_over(key)
                try:
                    await attempt()
                except RateLimited:
                    raise
                except HostError:
                    await self.limiter.hit(key)
                    raise
        finally:
            users[0] -= 1
            if not users[0]:
                del self._locks[key]

    async def refuse_if_over(self, key: str) -> None:
        """``RATE_LIMITED`` while ``key`` is over its limit, even for credentials known to be good:
        otherwise a guesser over the limit could still tell a remembered good guess from a bad one.
        """
        wait = await self.limiter.exceeded(key)
        if wait is not None:
            raise RateLimited(
                f"Too many failed attempts; retry in {round(wait)} s.", retry_after=wait
            )
