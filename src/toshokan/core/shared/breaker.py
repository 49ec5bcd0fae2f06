"""Whether the shared Redis may be asked, and finding it again when it went away.

A failed call opens the breaker: every later call skips Redis at once and
uses the process's own state, so a Redis that is down never makes a request
wait or fail. One line is logged when it goes and one when it comes back, not
one per request. While open, a background task probes Redis every
:data:`PROBE_SECONDS`; the first answer closes the breaker and runs the
``on_recovered`` callbacks (the cache re-reads the shared generations).
"""

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from toshokan.core.shared.connection import redis_address

log = logging.getLogger("toshokan.shared")

#: Seconds between probes of a Redis that went away.
PROBE_SECONDS = 2.0


class Breaker:
    def __init__(
        self,
        url: str,
        probe: Callable[[], Awaitable[object]],
        errors: tuple[type[BaseException], ...],
    ):
        self.where = redis_address(url)
        self.errors = errors
        self._probe = probe
        self._open_since: str | None = None
        self._prober: asyncio.Task[None] | None = None
        self._recovered: list[Callable[[], Awaitable[None]]] = []

    def available(self) -> bool:
        return self._open_since is None

    def detail(self) -> str | None:
        """What ``health`` and ``ping`` say while Redis is away, else None."""
        if self._open_since is None:
            return None
        return (
            f"shared state unavailable: Redis at {self.where} does not answer "
            f"({self._open_since}); this process uses its own cache, limits and budgets"
        )

    def on_recovered(self, callback: Callable[[], Awaitable[None]]) -> None:
        self._recovered.append(callback)

    def failed(self, error: BaseException) -> None:
        """A call to Redis failed: use per-process state until a probe finds Redis again."""
        if self._open_since is not None:
            return
        self._open_since = type(error).__name__
        log.warning(
            "Redis at %s does not answer (%s); each process keeps its own state until it does",
            self.where,
            type(error).__name__,
        )
        with contextlib.suppress(RuntimeError):  # no running loop: the next call probes
            self._prober = asyncio.get_running_loop().create_task(self._probe_until_back())

    async def check(self) -> None:
        """Ask Redis once (at start-up): opens the breaker when it does not answer."""
        try:
            await self._probe()
        except self.errors as error:
            self.failed(error)

    async def _probe_until_back(self) -> None:
        while True:
            await asyncio.sleep(PROBE_SECONDS)
            try:
                await self._probe()
            except self.errors:
                continue
            break
        self._open_since = None
        log.warning("Redis at %s answers again; state is shared again", self.where)
        for callback in self._recovered:
            try:
                await callback()
            except self.errors as error:
                self.failed(error)
                return

    async def aclose(self) -> None:
        if self._prober is not None:
            self._prober.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._prober
