"""Server-side cache of adapter results, with coalescing of identical requests.

Each kind of result (search, manga, chapters, configuration) has its own TTL
from the configuration. While a result is being computed, every identical
request awaits the same task instead of calling the adapter again, so a burst
of N readers opening the same title costs one upstream round trip. Failures
are not cached: the next request tries again. When every request waiting for
a result has gone (clients hung up), the work is cancelled: nobody would read
its answer.

Keys start with the source slug and that source's *generation*: a source that
reports a change (:meth:`ResultCache.invalidate`) moves to a new generation,
so nothing cached about it before is found again, at once and in O(1).
"""

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

from cachetools import TTLCache

T = TypeVar("T")


class _Flight:
    """One computation in progress and the number of requests awaiting it."""

    __slots__ = ("task", "waiters")

    def __init__(self, task: "asyncio.Task[Any]"):
        self.task = task
        self.waiters = 0


class ResultCache:
    def __init__(self, ttls: dict[str, int], max_entries: int):
        self._stores: dict[str, TTLCache[Hashable, Any]] = {
            kind: TTLCache(maxsize=max_entries, ttl=ttl)
            for kind, ttl in ttls.items()
            if ttl > 0 and max_entries > 0
        }
        self._in_flight: dict[tuple[str, Hashable], _Flight] = {}
        self._generations: dict[str, int] = {}
        self._listeners: list[Callable[[str], None]] = []
        self._lookups: list[Callable[[str, str], None]] = []

    def generation(self, source: str) -> int:
        """Part of every key about ``source``: bumped when the source's content changes."""
        return self._generations.get(source, 0)

    def invalidate(self, source: str) -> None:
        """Forget every answer about ``source`` (its content changed)."""
        self._generations[source] = self.generation(source) + 1
        for listener in self._listeners:
            listener(source)

    def on_invalidate(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(source)`` whenever a source's answers are invalidated."""
        self._listeners.append(listener)

    def on_lookup(self, listener: Callable[[str, str], None]) -> None:
        """Call ``listener(kind, result)`` on every lookup, ``result`` being ``hit`` (kept),
        ``shared`` (joined a computation under way) or ``miss`` (computed now)."""
        self._lookups.append(listener)

    def _looked_up(self, kind: str, result: str) -> None:
        for listener in self._lookups:
            listener(kind, result)

    def peek(self, kind: str, key: Hashable) -> Any | None:
        store = self._stores.get(kind)
        return None if store is None else store.get(key)

    async def get_or_compute(
        self, kind: str, key: Hashable, compute: Callable[[], Awaitable[T]]
    ) -> T:
        store = self._stores.get(kind)
        if store is not None:
            try:
                cached: T = store[key]
                self._looked_up(kind, "hit")
                return cached
            except KeyError:
                pass
        flight_key = (kind, key)
        flight = self._in_flight.get(flight_key)
        if flight is None:
            # A task of its own, so one client that disconnects does not cancel the others' answer.
            task = asyncio.create_task(self._compute(flight_key, store, compute))
            task.add_done_callback(_retrieve)
            flight = self._in_flight[flight_key] = _Flight(task)
            self._looked_up(kind, "miss")
        else:
            self._looked_up(kind, "shared")
        flight.waiters += 1
        try:
            return await asyncio.shield(flight.task)
        finally:
            flight.waiters -= 1
            if flight.waiters == 0 and not flight.task.done():
                flight.task.cancel()  # every client went away: nobody reads the answer

    async def _compute(
        self,
        flight_key: tuple[str, Hashable],
        store: "TTLCache[Hashable, Any] | None",
        compute: Callable[[], Awaitable[T]],
    ) -> T:
        try:
            value = await compute()
            if store is not None:
                store[flight_key[1]] = value
            return value
        finally:
            del self._in_flight[flight_key]

    def clear(self) -> None:
        for store in self._stores.values():
            store.clear()


def _retrieve(task: "asyncio.Task[Any]") -> None:
    # When every waiter went away, nobody reads the failure; reading it here avoids a warning.
    if not task.cancelled():
        task.exception()
