"""Server-side cache of adapter results, with coalescing of identical requests.

Each kind of result (search, manga, chapters, configuration, authorisation decisions, and what faces
keep through the core: rendered translations, sign-in sessions) has its own
TTL from the configuration; a kind holding bodies may instead be bounded by
their total size (:class:`Kind`), so memory stays bounded whatever they weigh. While a result is being computed, every identical
request awaits the same task instead of calling the adapter again, so a burst
of N readers opening the same title costs one upstream round trip. Failures
are not cached: the next request tries again. When every request waiting for
a result has gone (clients hung up), the work is cancelled: nobody would read
its answer.

Keys start with the source slug and that source's *generation*: a source that
reports a change (:meth:`ResultCache.invalidate`) moves to a new generation,
so nothing cached about it before is found again, at once and in O(1).

With ``[cluster] redis`` (:meth:`ResultCache.share`), results of the kinds
given a :class:`~toshokan.core.shared.results.Codec` (the core's are
:data:`toshokan.core.answers.SHARED_CODECS`, which say why the others stay here)
are also kept in Redis and
computed by one process of the whole host at a time, and generations follow
the other processes' (:mod:`toshokan.core.shared`). This process's own store
stays in front: a result found in Redis is kept here too, for what is left of
its time there.
"""

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from cachetools import TLRUCache

from toshokan.core.shared.generations import SharedGenerations
from toshokan.core.shared.results import Codec, SharedResults

T = TypeVar("T")


@dataclass(frozen=True)
class Kind:
    """A kind of result kept ``ttl`` seconds; with ``max_bytes``, bounded by the total length of
    its values (bytes) rather than by their number. A value longer than the bound is answered
    but not kept."""

    ttl: int
    max_bytes: int | None = None


class _Flight:
    """One computation in progress and the number of requests awaiting it."""

    __slots__ = ("task", "waiters")

    def __init__(self, task: "asyncio.Task[Any]"):
        self.task = task
        self.waiters = 0


class ResultCache:
    def __init__(self, kinds: Mapping[str, int | Kind], max_entries: int):
        self._stores: dict[str, TLRUCache[Hashable, Any]] = {}
        ttls: dict[str, int] = {}
        for name, given in kinds.items():
            kind = given if isinstance(given, Kind) else Kind(given)
            ttls[name] = kind.ttl
            if kind.ttl <= 0 or max_entries <= 0:
                continue
            if kind.max_bytes is None:
                self._stores[name] = TLRUCache(maxsize=max_entries, ttu=self._expiry(kind.ttl))
            else:
                self._stores[name] = TLRUCache(
                    maxsize=kind.max_bytes, ttu=self._expiry(kind.ttl), getsizeof=len
                )
        # Seconds the entry being stored has left, when less than its kind's whole TTL (it came
        # from the shared cache, where it has lived a while already).
        self._lifetime: float | None = None
        self._in_flight: dict[tuple[str, Hashable], _Flight] = {}
        self._generations: dict[str, int] = {}
        self._listeners: list[Callable[[str], None]] = []
        self._lookups: list[Callable[[str, str], None]] = []
        self._ttls = ttls
        self._shared: SharedResults | None = None
        self._shared_generations: SharedGenerations | None = None
        self._codecs: dict[str, Codec[Any]] = {}

    def share(self, results: SharedResults, codecs: dict[str, Codec[Any]]) -> SharedGenerations:
        """Keep the kinds of ``codecs`` in Redis too, computed once for the whole host, and
        follow the generations every process shares; the caller starts the latter."""
        self._shared = results
        self._codecs = {kind: codec for kind, codec in codecs.items() if kind in self._stores}
        self._shared_generations = SharedGenerations(
            results.redis, self._generations, self._announce
        )
        return self._shared_generations

    def _expiry(self, ttl: int) -> Callable[[Hashable, Any, float], float]:
        def expires(_key: Hashable, _value: Any, now: float) -> float:
            return now + (ttl if self._lifetime is None else min(ttl, self._lifetime))

        return expires

    def generation(self, source: str) -> int:
        """Part of every key about ``source``: bumped when the source's content changes."""
        return self._generations.get(source, 0)

    def invalidate(self, source: str) -> None:
        """Forget every answer about ``source`` (its content changed)."""
        self._generations[source] = self.generation(source) + 1
        self._announce(source)
        if self._shared_generations is not None:
            self._shared_generations.bumped(source)

    def _announce(self, source: str) -> None:
        for listener in self._listeners:
            listener(source)

    def on_invalidate(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(source)`` whenever a source's answers are invalidated."""
        self._listeners.append(listener)

    def on_lookup(self, listener: Callable[[str, str], None]) -> None:
        """Call ``listener(kind, result)`` on every lookup, ``result`` being ``hit`` (kept in
        this process), ``joined`` (joined this process's computation under way), ``shared``
        (found in the shared cache, computed by another process) or ``miss`` (computed)."""
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
        else:
            self._looked_up(kind, "joined")
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
        store: "TLRUCache[Hashable, Any] | None",
        compute: Callable[[], Awaitable[T]],
    ) -> T:
        try:
            kind, key = flight_key
            codec = self._codecs.get(kind)
            lifetime = None
            if self._shared is not None and codec is not None:
                ttl = self._ttls[kind]
                computed: list[bool] = []

                async def computing() -> T:
                    computed.append(True)
                    return await compute()

                value, lifetime = await self._shared.get_or_compute(
                    kind, key, ttl, codec, computing
                )
                self._looked_up(kind, "miss" if computed else "shared")
            else:
                value = await compute()
                self._looked_up(kind, "miss")
            if store is not None:
                self._lifetime = lifetime
                try:
                    with contextlib.suppress(ValueError):  # longer than a byte-bounded kind holds
                        store[key] = value
                finally:
                    self._lifetime = None
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
