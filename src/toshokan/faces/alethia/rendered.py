"""The dialect's translations of the core's answers, kept while they are asked for again.

The core caches its answers; translating a long chapter list into the app's
shapes costs several times what serialising it did, and readers ask for the
same lists over and over. A translation depends only on the answer's bytes
(its ETag) and the few inputs named in its key, so it is kept in the core's
cache as a kind of its own (:data:`RENDERED`), bounded by bytes, never by
count, so that memory stays bounded whatever the lists weigh; one cache for
the whole host, which a shared store can replace in one place.
"""

from collections.abc import Callable, Hashable

from toshokan.core import Core
from toshokan.core.cache import Kind

#: The kind of the core's cache the translations are kept under.
RENDERED = "alethia-rendered"
#: Bytes of translated answers kept, and for how long (their keys name what they translate,
#: so age only bounds how long an unread one stays).
CACHED = {RENDERED: Kind(ttl=3600, max_bytes=32 * 1024 * 1024)}


async def rendered(core: Core, key: Hashable, render: Callable[[], bytes]) -> bytes:
    """The body rendered for ``key``: kept from before, or rendered now."""

    async def compute() -> bytes:
        return render()

    return await core.cache.get_or_compute(RENDERED, key, compute)
