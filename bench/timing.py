"""The clocks the benchmarks share: per-call times with rows taking turns, and calls per second.

Why one place: a row and its baseline must be timed the same way in the same run for
their ratio to mean anything, so every script measures with these.
"""

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence


async def seconds_each(
    calls: Sequence[Callable[[], Awaitable[None]]], rounds: int
) -> list[list[float]]:
    """Each call's time over ``rounds`` rounds (after one untimed warm-up of each), the calls
    taking turns within a round so that every row sees the same machine load."""
    for call in calls:
        await call()
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(rounds):
        for call, kept in zip(calls, times, strict=True):
            started = time.perf_counter()
            await call()
            kept.append(time.perf_counter() - started)
    return times


def median_ms(times: Sequence[float]) -> float:
    return statistics.median(times) * 1000


def p99_ms(times: Sequence[float]) -> float:
    return statistics.quantiles(times, n=100)[98] * 1000


async def per_second(
    call: Callable[[int], Awaitable[None]], count: int, concurrency: int = 1
) -> float:
    """How many of ``call(0)`` .. ``call(count - 1)`` complete per second, ``concurrency`` at once."""
    numbers = iter(range(count))

    async def worker() -> None:
        # One shared iterator: each worker takes the next number as soon as it is free.
        for number in numbers:
            await call(number)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return count / (time.perf_counter() - started)
