"""Server-side cache of adapter results, with coalescing of identical requests.

Each kind of result (search, manga, chapters, configuration) has its own TTL
from the configuration. While a result is being computed, every identical
request awaits the same task instead of calling the adapter again, so a burst
of N readers opening the same title costs one upstream round trip. Failures
are not cached: the next request tries again.
"""

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

from cachetools import TTLCache

T = TypeVar("T")


class ResultCache:
    def __init__(self, ttls: dict[str, int], max_entries: int):
        self._stores: dict[str, TTLCache[Hashable, Any]] = {
            kind: TTLCache(maxsize=max_entries, ttl=ttl)
            for kind, ttl in ttls.items()
            if ttl > 0 and max_entries > 0
        }
        self._in_flight: dict[tuple[str, Hashable], asyncio.Task[Any]] = {}

    async def get_or_compute(
        self, kind: str, key: Hashable, compute: Callable[[], Awaitable[T]]
    ) -> T:
        store = self._stores.get(kind)
        if store is not None:
            try:
                return store[key]
            except KeyError:
                pass
        flight_key = (kind, key)
        task = self._in_flight.get(flight_key)
        if task is None:
            # A task of its own, so a client that disconnects does not cancel the others' answer.
            task = asyncio.create_task(self._compute(flight_key, store, compute))
            task.add_done_callback(_retrieve)
            self._in_flight[flight_key] = task
        return await asyncio.shield(task)

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
