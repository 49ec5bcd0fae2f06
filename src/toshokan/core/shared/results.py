"""Answers kept in Redis, and one process of the whole host computing each.

A result asked for by several processes at once is computed by the one that
takes its *lease* (``SET NX`` with an expiry) while the others poll for the
answer it stores: a search asked on two replicas reaches the upstream once.
A process waits at most ``wait_limit`` seconds (the upstream deadline) and,
when the lease holder failed (the lease is gone, no answer) or is too slow,
computes the result itself: waiting never turns into a failure of its own.
The lease lasts :data:`LEASE_SECONDS` and its holder renews it while it
computes, so a holder that was killed frees it within that time and a waiter
takes over, well inside the deadline.

Answers are stored as bytes (:class:`Codec`), with the TTL of their kind, under a
digest of the cache key; keys carry the source's generation
(:mod:`.generations`), so nothing needs deleting when content changes.
Whenever Redis does not answer, the result is computed here, as without Redis.
"""

import asyncio
import contextlib
import hashlib
import secrets
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from toshokan.core.shared import SharedRedis, Unavailable
from toshokan.core.shared.lease import RELEASE, keep_renewed, release

T = TypeVar("T")

#: Seconds between two looks at an answer another process is computing.
POLL_SECONDS = 0.025
#: Seconds a lease lasts unless renewed (every third of it, while its holder computes).
LEASE_SECONDS = 3.0
LEASE_MS = int(LEASE_SECONDS * 1000)


@dataclass(frozen=True)
class Codec(Generic[T]):
    """How one kind of result is stored: as bytes, and back."""

    encode: Callable[[T], bytes]
    decode: Callable[[bytes], T]


async def _look(r: Any, name: str, lease: str) -> list[Any]:
    """The stored answer, the lease's holder and the answer's milliseconds left, in one trip."""
    async with r.pipeline(transaction=False) as pipe:
        pipe.get(name)
        pipe.get(lease)
        pipe.pttl(name)
        found: list[Any] = await pipe.execute()
    return found


def digest(key: Hashable) -> str:
    """A cache key (tuples of strings, numbers and None) as a short name every process agrees on."""
    return hashlib.sha256(repr(key).encode("utf-8", "surrogatepass")).hexdigest()[:32]


class SharedResults:
    def __init__(self, redis: SharedRedis, wait_limit: float, prefix: str = "toshokan:result:"):
        self.redis = redis
        self.wait_limit = wait_limit
        self.prefix = prefix

    async def get_or_compute(
        self,
        kind: str,
        key: Hashable,
        ttl: int,
        codec: Codec[Any],
        compute: Callable[[], Awaitable[T]],
    ) -> tuple[T, float]:
        """The result, and the seconds it has left to live (``ttl`` when computed now)."""
        name = f"{self.prefix}{kind}:{digest(key)}"
        lease = f"{name}:lease"
        token = secrets.token_hex(8)
        give_up_at = time.monotonic() + self.wait_limit
        try:
            while True:
                stored, holder, left_ms = await self.redis.run(lambda r: _look(r, name, lease))
                if stored is not None:
                    decoded: T = codec.decode(stored)
                    return decoded, max(0.0, left_ms / 1000)
                if holder is None and await self.redis.run(
                    lambda r: r.set(lease, token, nx=True, px=LEASE_MS)
                ):
                    value = await self._compute_and_store(name, lease, token, ttl, codec, compute)
                    return value, ttl
                if time.monotonic() >= give_up_at:
                    break
                await asyncio.sleep(POLL_SECONDS)
        except Unavailable:
            pass
        return await compute(), ttl

    async def _compute_and_store(
        self,
        name: str,
        lease: str,
        token: str,
        ttl: int,
        codec: Codec[Any],
        compute: Callable[[], Awaitable[T]],
    ) -> T:
        renewer = asyncio.create_task(keep_renewed(self.redis, lease, token, LEASE_MS))
        try:
            value = await compute()
        except BaseException:
            # Failures are not shared: the processes waiting try for themselves at once.
            await release(self.redis, lease, token)
            raise
        finally:
            renewer.cancel()
        encoded = codec.encode(value)

        async def store(r: Any) -> None:
            async with r.pipeline(transaction=False) as pipe:
                pipe.set(name, encoded, px=ttl * 1000)
                pipe.eval(RELEASE, 1, lease, token)
                await pipe.execute()

        with contextlib.suppress(Unavailable):
            await self.redis.run(store)
        return value
