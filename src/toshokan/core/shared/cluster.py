"""The shared state of one host, built from ``[cluster] redis`` and ``[limits] storage``.

:class:`Cluster` owns the Redis connections and hands each part of the host
its share: the core's cache (results, coalescing, generations), the counters
of rate limits and credential attempts, and the SDK's upstream budgets. With
neither setting it holds nothing and the host keeps per-process state.
"""

import asyncio
import contextlib
import functools
from typing import Any

from limits.aio.strategies import MovingWindowRateLimiter

from toshokan.config import HostSettings
from toshokan.core.cache import ResultCache
from toshokan.core.limits import redis_strategy
from toshokan.core.readiness import Readiness
from toshokan.core.shared import SharedRedis, Unavailable
from toshokan.core.shared.generations import SharedGenerations
from toshokan.core.shared.lease import Leases
from toshokan.core.shared.results import Codec, SharedResults
from toshokan.core.shared.secrets import SealedSecrets
from toshokan.sdk import throttle
from toshokan.sdk.context import HostServices

#: Redis keys of upstream budgets an upstream paused, by budget name; they expire with the pause.
PAUSED = "toshokan:paused:"
#: Seconds a process waits for another's answer beyond the upstream deadline it shares.
WAIT_MARGIN = 1.0


class SharedBudgets:
    """The SDK's upstream budgets counted in Redis (:class:`toshokan.sdk.throttle.SharedCounts`)."""

    def __init__(self, redis: SharedRedis):
        self.redis = redis
        self.strategy: MovingWindowRateLimiter = redis_strategy(redis.url)
        self.errors = redis.errors
        self._pausing: set[asyncio.Task[None]] = set()

    def available(self) -> bool:
        return self.redis.breaker.available()

    def failed(self, error: BaseException) -> None:
        self.redis.breaker.failed(error)

    def pause(self, name: str, seconds: float) -> None:
        async def pause() -> None:
            ms = max(1, int(seconds * 1000))
            with contextlib.suppress(Unavailable):
                await self.redis.run(lambda r: r.set(f"{PAUSED}{name}", 1, px=ms))

        task = asyncio.get_running_loop().create_task(pause())
        self._pausing.add(task)
        task.add_done_callback(self._pausing.discard)

    async def paused_for(self, name: str) -> float:
        left: int = await self.redis.client.pttl(f"{PAUSED}{name}")
        return max(0.0, left / 1000)


class Cluster:
    def __init__(self, settings: HostSettings):
        url = settings.cluster.redis
        # Sealing the secrets adapters share needs cryptography too.
        self.redis = SharedRedis(url, "[cluster] redis", "cryptography") if url else None
        storage = settings.counter_storage()
        #: Where rate-limit and credential-attempt counters live; None: this process's memory.
        self.counters: SharedRedis | None = (
            None
            if storage.startswith("memory")
            else self.redis
            if storage == url
            else SharedRedis(storage, "[limits] storage")
        )
        self.wait_limit = settings.server.upstream_timeout + WAIT_MARGIN
        self._generations: SharedGenerations | None = None

    def share_cache(self, cache: ResultCache, codecs: dict[str, Codec[Any]]) -> None:
        if self.redis is not None:
            results = SharedResults(self.redis, self.wait_limit)
            self._generations = cache.share(results, codecs)

    def share_services(self, services: HostServices) -> None:
        """Hand adapters the host's shared secrets (sealed) and its leases."""
        if self.redis is not None:
            services.provide(
                shared_secrets=SealedSecrets(self.redis, services.secret),
                exclusive=Leases(self.redis).exclusive,
            )

    async def startup(self) -> None:
        """Ask each Redis once (one log line for one that does not answer) and start sharing."""
        for redis in self._connections():
            await redis.breaker.check()
        if self.redis is not None:
            throttle.share(SharedBudgets(self.redis))
        if self._generations is not None:
            await self._generations.sync()
            self._generations.start()

    async def unreachable(self) -> list[str]:
        """One line for each configured Redis that does not answer now (``check-config``)."""
        lines = []
        for redis in self._connections():
            try:
                await redis.client.ping()
            except redis.errors as error:
                lines.append(
                    f"{redis.setting}: Redis at {redis.breaker.where} does not answer now "
                    f"({type(error).__name__}); the host will keep per-process state until it does"
                )
            finally:
                await redis.aclose()
        return lines

    async def shutdown(self) -> None:
        if self.redis is not None:
            throttle.share(None)
        if self._generations is not None:
            await self._generations.aclose()
        for redis in self._connections():
            await redis.aclose()

    def add_checks(self, readiness: Readiness) -> None:
        """Report each Redis on ``/_/ready``, as optional: without it the host degrades to
        per-process state and still serves, so a balancer must not take every replica out."""
        for redis in self._connections():
            name = "redis" if redis is self.redis else "limits storage"
            readiness.add(name, functools.partial(_answers, redis), required=False)

    def detail(self) -> str | None:
        """What ``health`` and ``ping`` add while a Redis does not answer."""
        details = [d for redis in self._connections() if (d := redis.breaker.detail())]
        return "; ".join(details) or None

    def _connections(self) -> list[SharedRedis]:
        found = [self.redis, self.counters]
        return [r for i, r in enumerate(found) if r is not None and r not in found[:i]]


class SharedStateUnavailable(Exception):
    """A Redis of the host does not answer; the message is what ``health`` says of it."""


async def _answers(redis: SharedRedis) -> None:
    """Ask Redis through its breaker: a failure opens it, as any request's would, and
    while it is open the probe in the background, not this check, finds Redis again."""
    try:
        await redis.run(lambda r: r.ping())
    except Unavailable:
        raise SharedStateUnavailable(
            redis.breaker.detail() or f"Redis at {redis.breaker.where} does not answer"
        ) from None
