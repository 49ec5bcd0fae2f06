"""The dialect's translations of the core's answers, kept while they are asked for again.

The core caches its answers; translating a long chapter list into the app's
shapes costs several times what serialising it did, and readers ask for the
same lists over and over. A translation depends only on the answer's bytes
(its ETag) and the few inputs named in its key, so it is kept in an LRU
bounded by bytes, never by count, so that memory stays bounded whatever
the lists weigh.
"""

from collections.abc import Callable, Hashable

from cachetools import LRUCache

#: Bytes of translated answers kept by default.
DEFAULT_BYTES = 32 * 1024 * 1024


class Rendered:
    def __init__(self, max_bytes: int = DEFAULT_BYTES):
        self._bodies: LRUCache[Hashable, bytes] = LRUCache(maxsize=max_bytes, getsizeof=len)

    def get(self, key: Hashable, render: Callable[[], bytes]) -> bytes:
        """The body rendered for ``key``: kept from before, or rendered now."""
        body = self._bodies.get(key)
        if body is None:
            body = render()
            if len(body) <= self._bodies.maxsize:
                self._bodies[key] = body
        return body
