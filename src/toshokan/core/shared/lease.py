"""One process of the whole host at a time: a lease in Redis (the library scan's).

The lease is a Redis lock that expires after :data:`LEASE_SECONDS` unless its
holder renews it, which it does every third of that while its work runs: a
holder killed mid-scan frees the lease within half a minute. Others wait,
looking every :data:`WAIT_SECONDS`. Redis not answering, before or during,
lets the work go ahead in this process (as without Redis): a scan is never
held up by the cluster, only spread out by it.
"""

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from toshokan.core.shared import SharedRedis, Unavailable

LEASE_SECONDS = 30
WAIT_SECONDS = 0.5

# Delete (or renew, for ARGV[2] milliseconds) a lease only while it is still this holder's:
# it may have lapsed and moved on to another process.
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""


async def keep_renewed(redis: SharedRedis, key: str, token: str, lease_ms: int) -> None:
    """Renew the lease ``key`` every third of ``lease_ms`` while ``token`` holds it; run as a
    task, cancelled once the work under the lease is done."""
    while True:
        await asyncio.sleep(lease_ms / 3000)
        with contextlib.suppress(Unavailable):
            await redis.run(lambda r: r.eval(RENEW, 1, key, token, lease_ms))


async def release(redis: SharedRedis, key: str, token: str) -> None:
    """Let go of the lease ``key`` if ``token`` still holds it; Redis not answering lets it lapse."""
    with contextlib.suppress(Unavailable):
        await redis.run(lambda r: r.eval(RELEASE, 1, key, token))


class Leases:
    def __init__(self, redis: SharedRedis, prefix: str = "toshokan:lease:"):
        self.redis = redis
        self.prefix = prefix

    @asynccontextmanager
    async def exclusive(self, name: str) -> AsyncIterator[None]:
        """Hold the lease ``name`` while the block runs (:class:`toshokan.sdk.context.Exclusive`)."""
        key, token = self.prefix + name, secrets.token_hex(8)
        held = await self._take(key, token)
        renewer = (
            asyncio.create_task(keep_renewed(self.redis, key, token, LEASE_SECONDS * 1000))
            if held
            else None
        )
        try:
            yield
        finally:
            if renewer is not None:
                renewer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await renewer
                await release(self.redis, key, token)

    async def _take(self, key: str, token: str) -> bool:
        """Wait for the lease; False when Redis stopped answering (go ahead without it)."""
        while True:
            try:
                if await self.redis.run(lambda r: r.set(key, token, nx=True, ex=LEASE_SECONDS)):
                    return True
            except Unavailable:
                return False
            await asyncio.sleep(WAIT_SECONDS)
