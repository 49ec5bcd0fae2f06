"""Which cached answer a request was served from, for an outer layer that replays answers.

An outer layer (the edge) opens a :class:`Served` record around a request;
the core notes on it the cache entry whose bytes it answered with. The edge
may then answer identical requests with the same bytes for exactly as long
as :meth:`Served.alive` holds: the entry is still the one the core's cache
holds (not expired, evicted or cleared). Invalidation of a source is
announced separately by :meth:`ResultCache.on_invalidate`.
"""

from collections.abc import Hashable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from toshokan.core.cache import ResultCache


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


def note(cache: ResultCache, kind: str, key: Hashable, answer: Any, source: str | None) -> None:
    """Record that the current request was answered with ``answer`` cached under ``key``."""
    served = SERVED.get()
    if served is not None:
        served.entry = CacheEntry(cache, kind, key, answer, source)
