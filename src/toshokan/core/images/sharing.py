"""Sharing work and bounding it: coalesced computations, per-host gates, a byte-bounded memory."""

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from toshokan.sdk.pictures import Picture

T = TypeVar("T")


class InFlight:
    """Concurrent calls with the same key share one computation."""

    def __init__(self) -> None:
        self._running: dict[Hashable, asyncio.Future[Any]] = {}

    async def run(self, key: Hashable, compute: Callable[[], Awaitable[T]]) -> T:
        future = self._running.get(key)
        if future is None:
            future = asyncio.ensure_future(compute())
            self._running[key] = future
            future.add_done_callback(lambda done: self._finished(key, done))
        result: T = await asyncio.shield(future)
        return result

    def _finished(self, key: Hashable, done: asyncio.Future[Any]) -> None:
        self._running.pop(key, None)
        if not done.cancelled():
            done.exception()  # retrieved, so a failure nobody awaited any more is not logged


class UpstreamGates:
    """At most ``per_key`` holders per upstream server (by its name in the URL); idle servers
    are forgotten past ``max_keys``."""

    def __init__(self, per_key: int, max_keys: int):
        self.per_key, self.max_keys = per_key, max_keys
        self._gates: dict[str, tuple[asyncio.Semaphore, list[int]]] = {}

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        if key not in self._gates and len(self._gates) >= self.max_keys:
            for idle in [k for k, (_, users) in self._gates.items() if not users[0]]:
                del self._gates[idle]
        gate, users = self._gates.setdefault(key, (asyncio.Semaphore(self.per_key), [0]))
        users[0] += 1
        try:
            async with gate:
                yield
        finally:
            users[0] -= 1


class MemoryCache:
    """An LRU of pictures bounded in bytes, each kept for a limited time."""

    def __init__(self, max_bytes: int, seconds: float):
        self.max_bytes, self.seconds = max_bytes, seconds
        self._items: OrderedDict[str, tuple[float, Picture]] = OrderedDict()
        self.size = 0

    def get(self, key: str) -> Picture | None:
        item = self._items.get(key)
        if item is None:
            return None
        if item[0] < time.monotonic():
            self._drop(key)
            return None
        self._items.move_to_end(key)
        return item[1]

    def put(self, key: str, picture: Picture) -> None:
        if len(picture.data) > self.max_bytes // 4:
            return  # one huge image must not flush everything else
        self._drop(key)
        self._items[key] = (time.monotonic() + self.seconds, picture)
        self.size += len(picture.data)
        while self.size > self.max_bytes:
            self._drop(next(iter(self._items)))

    def _drop(self, key: str) -> None:
        item = self._items.pop(key, None)
        if item is not None:
            self.size -= len(item[1].data)
