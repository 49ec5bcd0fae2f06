"""The client-side limiter: the configured rate holds under concurrent load, process-wide.

Timing assertions only use lower bounds that follow from the limiter's
guarantee (no window of ``period`` seconds holds more than ``N`` requests),
so a slow machine can only make them pass more easily: ``n`` requests need
at least ``(ceil(n / N) - 1) * period`` seconds. The windowed count allows
generous slack for the few microseconds between a grant and the fake
recording the request. Budgets count whole seconds (the ``limits`` library),
so the shortest test window is one second.
"""

import asyncio
import math
import time
from collections.abc import Callable

import pytest

from toshokan.models import SearchRequest
from toshokan.sdk import AllOf, RequestContext, Throttle, throttle, windows_for_rate
from toshokan.sdk.throttle import reserved
from toshokan.sources.mangadex import MangaDex, limits

from .fake import FakeMangaDex

pytestmark = pytest.mark.anyio
CTX = RequestContext()


def most_in_any_window(times: list[float], width: float) -> int:
    times = sorted(times)
    return max(
        (sum(1 for t in times[i:] if t - times[i] < width) for i in range(len(times))), default=0
    )


def test_rates_become_windows() -> None:
    assert windows_for_rate(5) == ((5, 1),)
    assert windows_for_rate(2.5) == ((5, 2), (3, 1))  # 2.5/s on average, never 4 in a second
    assert windows_for_rate(0.5) == ((1, 2),)


async def test_window_limiter_alone() -> None:
    limiter = Throttle("test alone", 3, 1)
    started = time.monotonic()
    granted: list[float] = []

    async def one() -> None:
        await limiter.acquire()
        granted.append(time.monotonic())

    await asyncio.gather(*(one() for _ in range(10)))
    assert time.monotonic() - started >= 3 * 1  # ceil(10 / 3) - 1 windows
    assert most_in_any_window(granted, 1 * 0.8) <= 3


async def test_configured_rate_holds_under_concurrent_searches(
    fake: FakeMangaDex, make_source: Callable[..., MangaDex]
) -> None:
    source = make_source(requests_per_second=4)
    n = 14
    started = time.monotonic()
    await asyncio.gather(
        *(source.search(SearchRequest(page=p, sort="latest"), CTX) for p in range(1, n + 1))
    )
    elapsed = time.monotonic() - started
    assert len(fake.requests) == n
    assert elapsed >= (math.ceil(n / 4) - 1) * 1.0  # 3 s: bursts of 4 at 0, 1, 2 and 3 s
    assert most_in_any_window([r.at for r in fake.requests], 0.8) <= 4


async def test_one_allowance_for_every_mangadex_source_of_the_process(
    fake: FakeMangaDex, make_source: Callable[..., MangaDex]
) -> None:
    first, second = make_source(requests_per_second=3), make_source(requests_per_second=3)
    started = time.monotonic()
    await asyncio.gather(
        *(
            s.search(SearchRequest(page=p, sort="latest"), CTX)
            for s in (first, second)
            for p in range(1, 5)
        )
    )
    # 8 requests at 3 per second, whichever source sent them: at least 2 s.
    assert time.monotonic() - started >= 2.0
    assert most_in_any_window([r.at for r in fake.requests], 0.8) <= 3


async def test_page_lists_also_hold_the_at_home_rate(
    fake: FakeMangaDex, make_source: Callable[..., MangaDex], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert make_source(at_home_per_minute=2)._at_home_budget.windows == ((2, 60),)
    throttle.reset()  # the first throttle of a name fixes its windows
    monkeypatch.setattr(limits, "AT_HOME_PERIOD", 1)  # a minute is too long for a test
    source = make_source(requests_per_second=20, at_home_per_minute=2)
    assert isinstance(source.at_home.limiter, AllOf)
    at_home, api = source.at_home.limiter.limiters
    assert isinstance(at_home, Throttle) and at_home.windows == ((2, 1),)
    assert api is source.client.limiter  # page lists count against the general budget too
    manga = fake.add_manga("m", "M")
    chapters = [fake.add_chapter(manga, str(n)) for n in range(6)]
    started = time.monotonic()
    await asyncio.gather(*(source.pages(manga.id, c.id, CTX) for c in chapters))
    assert time.monotonic() - started >= 2 * 1  # 6 at-home requests, 2 per 1 s
    assert most_in_any_window([r.at for r in fake.calls("^/at-home/")], 0.8) <= 2


async def test_a_readers_page_list_fits_in_what_background_work_leaves_readers(
    make_source: Callable[..., MangaDex],
) -> None:
    """A reader opening a chapter asks two API requests in a row (the chapter, then its page
    list) and one page list: background work (checks, downloads) leaves readers both API
    requests of any second, and keeps 32 of the 40 page lists a minute for kept chapters."""
    source = make_source()
    api, at_home = source._api_budget, source._at_home_budget
    assert api.windows == ((5, 1),) and at_home.windows == ((40, 60),)
    assert reserved(5, api.readers_share) == 2
    assert 40 - reserved(40, at_home.readers_share) == 32


async def test_concurrent_feed_pages_stay_within_the_rate(
    fake: FakeMangaDex, make_source: Callable[..., MangaDex]
) -> None:
    source = make_source(requests_per_second=2)
    manga = fake.add_manga("m", "M")
    fake.validate = False
    fake.add_many_chapters(manga, 3_000)  # 6 pages
    started = time.monotonic()
    assert len(await source.chapters(manga.id, CTX)) == 3_000
    assert time.monotonic() - started >= 2.0  # 6 requests at 2 per second
    assert most_in_any_window([r.at for r in fake.calls("/feed$")], 0.8) <= 2
