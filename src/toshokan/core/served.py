"""Which cached answer a request was served from, for an outer layer that replays answers.

An outer layer (the edge) opens a :class:`Served` record around a request;
the core notes on it the cache entry whose bytes it answered with. The edge
may then answer identical requests with the same bytes for exactly as long
as :meth:`Served.alive` holds: the entry is still the one the core's cache
holds (not expired, evicted or cleared). Invalidation of a source is
announced separately by :meth:`ResultCache.on_invalidate`.
"""

from collections.abc import Awaitable, Callable, Hashable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from toshokan.core.answers import Answer, json_of
from toshokan.core.cache import ResultCache

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One cache entry: where it lives, and the source it is about (None: every source)."""

    cache: ResultCache
    kind: str
    key: Hashable
    answer: Any
    source: str | None

    def alive(self) -> bool:
        return self.cache.peek(self.kind, self.key) is self.answer


class Served:
    """Filled in by the core while one request is answered; read by the layer that opened it."""

    __slots__ = ("entry",)

    def __init__(self) -> None:
        self.entry: CacheEntry | None = None


SERVED: ContextVar[Served | None] = ContextVar("toshokan_served", default=None)


def note_served(
    cache: ResultCache, kind: str, key: Hashable, answer: Any, source: str | None
) -> None:
    """Record that the current request was answered with ``answer`` cached under ``key``."""
    served = SERVED.get()
    if served is not None:
        served.entry = CacheEntry(cache, kind, key, answer, source)


async def cached_answer(
    cache: ResultCache,
    kind: str,
    key: Hashable,
    compute: Callable[[], Awaitable[T]],
    *,
    source: str | None,
    exclude_none: bool = False,
) -> Answer[T]:
    """The answer of ``kind`` under ``key``: cached, or computed now and serialised once; noted
    as what the current request was served from."""

    async def serialised() -> Answer[T]:
        value = await compute()
        return Answer(value, json_of(value, exclude_none))

    answer = await cache.get_or_compute(kind, key, serialised)
    note_served(cache, kind, key, answer, source)
    return answer
