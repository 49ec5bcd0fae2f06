"""Two result caches sharing one Redis, as two processes' do: answers, leases and generations.

Each cache has its own :class:`Cluster` (its own connections), as separate
processes have; the Redis is real.
"""

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from toshokan.config import HostSettings
from toshokan.core.cache import ResultCache
from toshokan.core.shared.cluster import Cluster
from toshokan.core.shared.results import Codec

pytestmark = pytest.mark.anyio
TEXT: Codec[Any] = Codec(encode=lambda value: value.encode(), decode=lambda body: body.decode())


@pytest.fixture
async def caches(redis_url: str) -> AsyncIterator[list[ResultCache]]:
    made, clusters = [], []
    for _ in range(2):
        cache = ResultCache({"search": 2}, max_entries=100)
        cluster = Cluster(HostSettings(cluster={"redis": redis_url}))
        cluster.share_cache(cache, {"search": TEXT})
        await cluster.startup()
        made.append(cache)
        clusters.append(cluster)
    yield made
    for cluster in clusters:
        await cluster.shutdown()


async def test_one_computation_for_both(caches: list[ResultCache]) -> None:
    computed = 0

    async def compute() -> str:
        nonlocal computed
        computed += 1
        await asyncio.sleep(0.3)
        return "answer"

    got = await asyncio.gather(
        *(cache.get_or_compute("search", ("q", 1), compute) for cache in caches * 2)
    )
    assert got == ["answer"] * 4
    assert computed == 1


async def test_an_answer_lives_no_longer_for_having_moved(caches: list[ResultCache]) -> None:
    first, second = caches

    async def compute() -> str:
        return "answer"

    await first.get_or_compute("search", ("q", 2), compute)
    await asyncio.sleep(1.2)
    await second.get_or_compute("search", ("q", 2), compute)  # from Redis, 0.8 s left
    assert second.peek("search", ("q", 2)) == "answer"
    await asyncio.sleep(1.0)
    assert second.peek("search", ("q", 2)) is None
    assert first.peek("search", ("q", 2)) is None


async def test_a_change_seen_by_one_reaches_the_other(caches: list[ResultCache]) -> None:
    first, second = caches
    dropped: list[str] = []
    second.on_invalidate(dropped.append)
    before = second.generation("local")
    first.invalidate("local")
    for _ in range(40):
        if dropped:
            break
        await asyncio.sleep(0.05)
    assert dropped == ["local"]
    assert second.generation("local") > before
    assert second.generation("local") == first.generation("local")
