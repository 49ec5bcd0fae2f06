"""Process-wide upstream budgets: no window ever holds more than the limit.

Assertions count requests inside sliding windows, which a slow machine
cannot break, plus lower bounds on elapsed time that follow from the
guarantee (``n`` requests at ``N`` per second need ``ceil(n / N) - 1``
seconds). Windows are 0.95 s wide: 50 ms of slack for the moment between a
grant and the transport seeing the request. A leaky bucket fails them.
"""

import asyncio
import math
import time

import httpx
import pytest
import respx

from toshokan.errors import UpstreamTimeout
from toshokan.sdk import (
    AllOf,
    BudgetPaused,
    Throttle,
    UpstreamClient,
    background,
    in_background,
    throttle,
    upstream_deadline,
)
from toshokan.sdk.throttle import reserved

pytestmark = pytest.mark.anyio
API = "https://upstream.example"
WIDTH = 0.95


def most_in_any_window(times: list[float], width: float) -> int:
    times = sorted(times)
    return max(
        (sum(1 for t in times[i:] if t - times[i] < width) for i in range(len(times))), default=0
    )


def recording(sent: list[float]) -> respx.MockRouter:
    router = respx.mock(assert_all_called=False)

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(time.monotonic())
        return httpx.Response(200, json={})

    router.get(url__startswith=API).mock(side_effect=record)
    return router


async def test_no_one_second_window_exceeds_the_rate_under_concurrent_load() -> None:
    sent: list[float] = []
    # Two clients of one host share its budget, as two adapters of one process would.
    first = UpstreamClient(API, user_agent="t", rate_per_second=5)
    second = UpstreamClient(API, user_agent="t", rate_per_second=5)
    n = 17
    started = time.monotonic()
    with recording(sent):
        await asyncio.gather(*((first if i % 2 else second).get_json(f"/x{i}") for i in range(n)))
    assert len(sent) == n
    assert time.monotonic() - started >= (math.ceil(n / 5) - 1) * 1.0  # bursts at 0, 1, 2, 3 s
    assert most_in_any_window(sent, WIDTH) <= 5
    await first.aclose()
    await second.aclose()


async def test_fractional_rate_holds_its_average_and_each_second() -> None:
    sent: list[float] = []
    client = UpstreamClient(API, user_agent="t", rate_per_second=2.5)  # 5 per 2 s, 3 per 1 s
    with recording(sent):
        started = time.monotonic()
        await asyncio.gather(*(client.get_json(f"/x{i}") for i in range(8)))
    assert time.monotonic() - started >= 2.0  # the 6th needs the first window of 2 s to pass
    assert most_in_any_window(sent, WIDTH) <= 3
    assert most_in_any_window(sent, 2 * WIDTH) <= 5
    await client.aclose()


async def test_combined_budgets_hold_each() -> None:
    narrow, wide = Throttle("test narrow", 2, 1), Throttle("test wide", 10, 1)
    both = AllOf(narrow, wide)
    granted: list[float] = []
    wide_only: list[float] = []

    async def take(limiter: AllOf | Throttle, into: list[float]) -> None:
        await limiter.acquire()
        into.append(time.monotonic())

    started = time.monotonic()
    await asyncio.gather(
        *(take(both, granted) for _ in range(5)), *(take(wide, wide_only) for _ in range(6))
    )
    assert time.monotonic() - started >= 2.0  # 5 through the narrow budget: 2 per second
    assert most_in_any_window(granted, WIDTH) <= 2
    assert most_in_any_window(granted + wide_only, WIDTH) <= 10


async def test_combined_budgets_are_counted_at_one_moment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A request needing two budgets (a page list: at-home and the API) takes neither until
    both have a slot, so it is sent right after each counted it: one counted by the slow
    budget and then kept waiting for the other would reach the upstream later than counted.
    Windows are an hour, so nothing frees during the test; a request that would wait for
    one fails at its deadline instead."""
    monkeypatch.setattr(throttle, "BACKGROUND_PATIENCE", 0.0)
    slow, busy = Throttle("test slow", 1, 3600), Throttle("test busy", 1, 3600)
    await busy.acquire()  # full for the hour
    with background():
        waiting = asyncio.create_task(AllOf(slow, busy).acquire())
    await asyncio.sleep(0.1)  # it has looked at both budgets and waits for the busy one
    assert not waiting.done()
    async with upstream_deadline(30):
        await slow.acquire()  # the slow budget's slot is still there for a request of it alone
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting


async def test_a_pause_refuses_the_budget_until_it_ends() -> None:
    budget = Throttle("test paused", 100, 1)
    budget.pause(0.3)
    assert 0.2 < budget.paused_for() <= 0.3
    with pytest.raises(BudgetPaused) as refused:
        await budget.acquire()
    assert 0.2 < refused.value.seconds <= 0.3
    await asyncio.sleep(0.35)
    await budget.acquire()
    assert budget.paused_for() == 0.0


async def test_a_pause_wakes_requests_queued_for_a_slot() -> None:
    budget = Throttle("test queued", 1, 1)
    await budget.acquire()  # the window is full for a second
    queued = [asyncio.create_task(budget.acquire()) for _ in range(3)]
    await asyncio.sleep(0.1)
    budget.pause(3600)
    done, _ = await asyncio.wait(queued, timeout=0.5)
    assert len(done) == 3
    assert all(isinstance(task.exception(), BudgetPaused) for task in done)


async def test_one_name_one_allowance() -> None:
    first = Throttle("test shared", 3, 1)
    second = Throttle("test shared", 7, 1)  # too late: the first rate stands, with a warning
    assert second.windows == first.windows == ((3, 1),)
    with pytest.raises(ValueError):
        Throttle.per_second("test bad", 0)


async def test_a_reader_gets_the_next_slot_of_a_budget_saturated_by_background_work() -> None:
    budget = Throttle("test busy", 5, 1)
    granted: list[str] = []

    async def take(who: str) -> None:
        await budget.acquire()
        granted.append(who)

    with background():
        queued = [asyncio.create_task(take(f"background {n}")) for n in range(12)]
    await asyncio.sleep(0.1)  # background work took its share of the window and queues for more
    taken = len(granted)
    assert taken == 5 - reserved(5)  # the last slot of the window stays free
    started = time.monotonic()
    await take("reader")
    assert time.monotonic() - started < 0.1  # the slot left free, at once
    await take("second reader")  # the window is full now: this one waits, first in line
    assert granted.index("second reader") == taken + 1
    for task in queued:
        task.cancel()
    await asyncio.gather(*queued, return_exceptions=True)


async def test_readers_queued_for_a_full_window_go_before_background_work_queued_earlier() -> None:
    budget = Throttle("test queue", 2, 1)
    granted: list[str] = []

    async def take(who: str) -> None:
        await budget.acquire()
        granted.append(who)

    await take("first")
    await take("second")  # the window is full for a second
    with background():
        early = [asyncio.create_task(take(f"background {n}")) for n in range(3)]
    await asyncio.sleep(0.05)
    late = [asyncio.create_task(take(f"reader {n}")) for n in range(2)]
    await asyncio.gather(*late)
    assert granted[2:4] == ["reader 0", "reader 1"]  # the next window is the readers'
    await asyncio.gather(*early)
    assert granted[4:] == ["background 0", "background 1", "background 2"]


async def test_background_work_alone_keeps_to_its_share_of_each_window() -> None:
    sent: list[float] = []
    client = UpstreamClient(API, user_agent="t", rate_per_second=5)
    with recording(sent), background():
        started = time.monotonic()
        await asyncio.gather(*(client.get_json(f"/x{i}") for i in range(9)))
    assert time.monotonic() - started >= 2.0  # 4 a second: the 9th in the third second
    assert most_in_any_window(sent, WIDTH) <= 5 - reserved(5)
    await client.aclose()


def test_the_mark_holds_inside_its_block_and_tasks_started_there() -> None:
    async def check() -> None:
        assert not in_background()
        with background():
            assert in_background()
            assert await asyncio.create_task(asyncio.sleep(0, in_background()))
        assert not in_background()

    asyncio.run(check())
    assert [reserved(n) for n in (1, 2, 5, 9, 10, 40)] == [0, 1, 1, 1, 2, 8]


async def test_a_reader_using_its_share_leaves_background_work_all_of_its_own() -> None:
    budget = Throttle("test shares", 5, 1)
    await budget.acquire()  # a reader's request, from the readers' fifth
    granted = 0

    async def take() -> None:
        nonlocal granted
        with background():
            await budget.acquire()
        granted += 1

    queued = [asyncio.create_task(take()) for _ in range(6)]
    await asyncio.sleep(0.1)
    assert granted == 5 - reserved(5)  # four fifths of the window, the reader's one aside
    for task in queued:
        task.cancel()
    await asyncio.gather(*queued, return_exceptions=True)


async def test_background_work_waiting_for_its_turn_is_not_late_and_a_reader_is() -> None:
    """A deadline bounds the upstream's answers: background work's wait for a window to free
    moves it later; a reader's wait counts, as the reader waits."""
    sent: list[float] = []
    client = UpstreamClient(API, user_agent="t", rate_per_second=1)
    with recording(sent):
        await client.get_json("/first")  # the window is full for a second
        with background():
            async with upstream_deadline(0.3):
                await client.get_json("/background")  # waited about a second: not late
        await client.get_json("/again")  # the window is full again
        with pytest.raises(UpstreamTimeout):
            async with upstream_deadline(0.3):
                await client.get_json("/reader")
    assert len(sent) == 3
    assert sent[1] - sent[0] >= 0.9
    await client.aclose()


async def test_background_work_starved_for_longer_than_its_patience_is_late(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(throttle, "BACKGROUND_PATIENCE", 0.5)
    budget = Throttle("test patience", 1, 3)
    await budget.acquire()  # the window is full for three seconds
    started = time.monotonic()
    with background(), pytest.raises(UpstreamTimeout):
        async with upstream_deadline(0.3):
            await budget.acquire()
    assert 0.7 <= time.monotonic() - started < 2.0  # its deadline, moved by its patience


async def test_background_work_never_takes_the_slots_a_budget_keeps_for_its_readers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A budget declared with two fifths for readers (one reader's action spending two of its
    requests in a row) leaves them both, however much background work asks. The window is an
    hour, so nothing frees during the test, and background work is given no patience: a request
    of it that would have to wait fails at its deadline instead of waiting."""
    monkeypatch.setattr(throttle, "BACKGROUND_PATIENCE", 0.0)
    budget = Throttle("test readers' share", 5, 3600, readers_share=0.4)
    assert reserved(5, budget.readers_share) == 2
    with background():
        for _ in range(3):
            await budget.acquire()  # background work's share of the window, at once
        for _ in range(4):
            with pytest.raises(UpstreamTimeout):
                async with upstream_deadline(0.05):
                    await budget.acquire()  # the readers' two slots are not background work's
    async with upstream_deadline(30):  # an hour's wait, were a slot taken, fails here instead
        await budget.acquire()
        await budget.acquire()  # a reader's second request, in the same window
    with pytest.raises(UpstreamTimeout):
        async with upstream_deadline(0.05):
            await budget.acquire()  # and the window is full now


def test_a_budget_declares_the_readers_share_once() -> None:
    first = Throttle("test declared share", 10, 1, readers_share=0.3)
    assert reserved(10, first.readers_share) == 3
    later = Throttle("test declared share", 10, 1)  # the first declaration stands, as its windows
    assert later.readers_share == 0.3
    assert Throttle.per_second("test per second share", 5, readers_share=0.4).readers_share == 0.4
    for share in (0, 1, 1.5, -0.2):
        with pytest.raises(ValueError):
            Throttle("test bad share", 5, 1, readers_share=share)
