"""Background work in one process of the host never takes the last slots of a shared budget:
a reader in another process finds one free at once.

The other process is a real one, counting in the same Redis as the test's own
(``[cluster] redis``); it takes slots of one budget as fast as the budget allows.
"""

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from toshokan.core.shared import SharedRedis
from toshokan.core.shared.cluster import SharedBudgets
from toshokan.sdk import Throttle, throttle

pytestmark = pytest.mark.anyio

BUDGET = ("test shared priority", 5, 1)
#: Takes slots of the budget, as background work when asked, until stopped.
SATURATE = """
import asyncio, contextlib, sys
from toshokan.core.shared import SharedRedis
from toshokan.core.shared.cluster import SharedBudgets
from toshokan.sdk import Throttle, background, throttle

async def main(url, mode):
    throttle.share(SharedBudgets(SharedRedis(url, "[cluster] redis")))
    budget = Throttle("test shared priority", 5, 1)
    with background() if mode == "background" else contextlib.nullcontext():
        while True:
            await budget.acquire()
            print("took", flush=True)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


@contextmanager
def saturating(redis_url: str, mode: str) -> Iterator[None]:
    """Another process taking every slot of the budget it may, once its first window is full."""
    process = subprocess.Popen(
        [sys.executable, "-c", SATURATE, redis_url, mode], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        for _ in range(4):  # background work's share of the first window is taken
            assert process.stdout.readline() == "took\n"
        yield
    finally:
        process.kill()
        process.wait()


async def waits_of_a_reader(redis_url: str, rounds: int) -> list[float]:
    shared = SharedBudgets(SharedRedis(redis_url, "[cluster] redis"))
    throttle.share(shared)
    budget = Throttle(*BUDGET)
    waits = []
    try:
        for _ in range(rounds):
            started = time.monotonic()
            await budget.acquire()
            waits.append(time.monotonic() - started)
            await asyncio.sleep(1.0)  # the next window
    finally:
        throttle.share(None)
        await shared.redis.aclose()
    return waits


async def test_a_reader_is_served_at_once_beside_another_process_background_work(
    redis_url: str,
) -> None:
    with saturating(redis_url, "background"):
        waits = await waits_of_a_reader(redis_url, 3)
    assert max(waits) < 0.3, waits


async def test_readers_in_two_processes_share_the_budget_first_come(redis_url: str) -> None:
    # The control: another process's readers leave no slot over, so this reader waits.
    with saturating(redis_url, "reader"):
        waits = await waits_of_a_reader(redis_url, 3)
    assert max(waits) > 0.3, waits
