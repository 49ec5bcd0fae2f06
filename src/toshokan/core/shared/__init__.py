"""State every process and replica of the host shares through one Redis (``[cluster] redis``).

Without ``[cluster] redis`` nothing here runs and each process keeps its own
state, as a single process always has. With it: the result cache and the
coalescing of identical requests (:mod:`.results`), the generations that drop
cached answers when a source's content changes, rate-limit and credential-attempt
counters (:mod:`toshokan.core.limits`), upstream budgets (handed to the SDK's
throttle), readers' upstream sessions and the library scan's lease.

Redis going away never fails a request: the :class:`Breaker` sends every call
to per-process state until Redis answers again, and ``health`` and ``ping`` say so.
"""

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from toshokan.core.shared.breaker import Breaker
from toshokan.core.shared.connection import connect, redis_errors, require_packages

T = TypeVar("T")


class Unavailable(Exception):
    """Redis cannot be asked now (the breaker is open, or this call failed): use local state."""


class SharedRedis:
    """One Redis address: its client, and the breaker every use of it shares."""

    def __init__(self, url: str, setting: str, *packages: str):
        """``setting`` names where ``url`` was configured; ``packages`` are needed besides redis."""
        require_packages(setting, "redis", *packages)
        self.url = url
        self.setting = setting
        self.client = connect(url)
        self.errors = redis_errors()
        self.breaker = Breaker(url, self.client.ping, self.errors)

    async def run(self, operation: Callable[[Any], Awaitable[T]]) -> T:
        """``operation(client)``, or :class:`Unavailable` when Redis cannot answer it now."""
        if not self.breaker.available():
            raise Unavailable
        try:
            return await operation(self.client)
        except self.errors as error:
            self.breaker.failed(error)
            raise Unavailable from None

    async def aclose(self) -> None:
        await self.breaker.aclose()
        await self.client.aclose()


__all__ = ["Breaker", "SharedRedis", "Unavailable"]
