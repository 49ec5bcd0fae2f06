"""Sources' generations kept in Redis, so a change one process sees drops every process's answers.

A source's generation is part of every cache key about it. A process that
sees a change (its library watcher) bumps its own generation at once, then
in Redis; every process reads Redis's generations every :data:`SYNC_SECONDS`
and adopts a higher one, which drops its cached answers and replayed ETags
for that source. Generations only grow: a bump is ``max(shared + 1, own)``,
so two processes that see two changes at once both count, and a Redis that
restarted empty is brought back up to date by the next bump.

Changes seen while Redis does not answer are kept and announced when it
answers again; meanwhile each process's own generations serve its own cache.
"""

import asyncio
import contextlib
import logging
from collections.abc import Callable

from toshokan.core.shared import SharedRedis, Unavailable

log = logging.getLogger("toshokan.shared")

#: Seconds between two reads of the shared generations (how late another replica's change lands).
SYNC_SECONDS = 0.5

_BUMP = """
local shared = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local wanted = math.max(shared + 1, tonumber(ARGV[2]))
redis.call('HSET', KEYS[1], ARGV[1], wanted)
return wanted
"""


class SharedGenerations:
    def __init__(
        self,
        redis: SharedRedis,
        generations: dict[str, int],
        changed: Callable[[str], None],
        key: str = "toshokan:generations",
    ):
        """``generations`` is the cache's own table, raised in place; ``changed(source)`` is
        called after a source's generation rose because another process saw a change."""
        self.redis = redis
        self.generations = generations
        self.changed = changed
        self.key = key
        self._unannounced: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._syncer: asyncio.Task[None] | None = None
        redis.breaker.on_recovered(self.announce_unannounced)

    def start(self) -> None:
        """Follow the shared generations (from a running event loop)."""
        if self._syncer is None:
            self._syncer = asyncio.get_running_loop().create_task(self._follow())

    def bumped(self, source: str) -> None:
        """The cache bumped ``source``'s own generation: raise the shared one in the background."""
        self._unannounced.add(source)
        with contextlib.suppress(RuntimeError):  # no loop: announced with the next sync
            task = asyncio.get_running_loop().create_task(self._announce(source))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def announce(self, source: str) -> None:
        """Raise ``source``'s shared generation now: for a command that changed it and serves
        nothing (:func:`announce_change`)."""
        await self._announce(source)

    async def announce_unannounced(self) -> None:
        for source in sorted(self._unannounced):
            await self._announce(source)

    async def sync(self) -> None:
        """Adopt every shared generation higher than this process's own."""
        try:
            shared = await self.redis.run(lambda r: r.hgetall(self.key))
        except Unavailable:
            return
        for raw_source, raw_value in shared.items():
            self._adopt(raw_source.decode(), int(raw_value))

    async def _announce(self, source: str) -> None:
        own = self.generations.get(source, 0)
        try:
            value = await self.redis.run(lambda r: r.eval(_BUMP, 1, self.key, source, own))
        except Unavailable:
            return
        self._unannounced.discard(source)
        self._adopt(source, int(value))

    def _adopt(self, source: str, value: int) -> None:
        if value > self.generations.get(source, 0):
            self.generations[source] = value
            self.changed(source)

    async def _follow(self) -> None:
        while True:
            await asyncio.sleep(SYNC_SECONDS)
            if self._unannounced and self.redis.breaker.available():
                await self.announce_unannounced()
            await self.sync()

    async def aclose(self) -> None:
        for task in [self._syncer, *self._tasks]:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


def announce_change(redis_url: str, source: str) -> None:
    """Tell every replica sharing ``redis_url`` that ``source`` changed, from a command (no
    event loop of its own): they drop what they remembered of it within :data:`SYNC_SECONDS`.
    When Redis does not answer, the replicas learn it as they would without Redis."""

    async def bump() -> None:
        redis = SharedRedis(redis_url, "[cluster] redis")
        try:
            await SharedGenerations(redis, {}, lambda _: None).announce(source)
        finally:
            await redis.aclose()

    asyncio.run(bump())
