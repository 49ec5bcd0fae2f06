"""What bounds an upstream: the request's deadline, body size, encodings, hints, nesting."""

import asyncio
import gzip
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter
from typing_extensions import TypedDict

from toshokan.errors import RateLimited, UpstreamError, UpstreamTimeout
from toshokan.sdk import (
    Throttle,
    UpstreamClient,
    clean_text,
    gather,
    parse_json,
    parse_payload,
    remaining,
    retry_after_seconds,
    upstream_deadline,
)
from toshokan.sdk.deadline import note_failure
from toshokan.sdk.http import MAX_HINT_SECONDS

pytestmark = pytest.mark.anyio
API = "https://upstream.example"
Handler = Callable[[httpx.Request], Any]


def client_of(handler: Handler, **options: Any) -> UpstreamClient:
    options.setdefault("backoff", 0.01)
    return UpstreamClient(
        API, user_agent="toshokan-test", transport=httpx.MockTransport(handler), **options
    )


def hinted(headers: dict[str, str]) -> float | None:
    raw = [(name.encode(), value.encode()) for name, value in headers.items()]
    return retry_after_seconds(httpx.Response(429, headers=raw))


@pytest.mark.parametrize("value", ["soon", "inf", "-inf", "nan", "-1", "1e400", "²", "", "Mon, 99"])
def test_unreadable_retry_hints_are_no_hint(value: str) -> None:
    assert hinted({"Retry-After": value}) is None


def test_readable_retry_hints() -> None:
    assert hinted({"Retry-After": "2.5"}) == 2.5
    assert hinted({"Retry-After": "99999999999"}) == MAX_HINT_SECONDS
    epoch = hinted({"X-RateLimit-Retry-After": str(time.time() + 30)})
    assert epoch is not None and 28 < epoch <= 30


@given(st.text(max_size=40))
def test_any_retry_hint_parses_to_a_bounded_wait_or_none(value: str) -> None:
    try:
        response = httpx.Response(429, headers={"Retry-After": value})
    except (UnicodeEncodeError, ValueError):
        return  # not a header value httpx could receive
    hint = retry_after_seconds(response)
    assert hint is None or 0 <= hint <= MAX_HINT_SECONDS


async def test_the_deadline_bounds_every_retry() -> None:
    async def never(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(60)
        raise AssertionError("unreachable")

    client = client_of(never, retries=5, timeout=10)
    started = time.monotonic()
    with pytest.raises(UpstreamTimeout):
        async with upstream_deadline(0.5):
            await client.get_json("/slow")
    assert time.monotonic() - started < 1.0
    await client.aclose()


async def test_a_retry_cut_short_by_a_stalled_machine_reports_the_upstreams_failure() -> None:
    """The upstream answered 503; the wait before retrying outlives the deadline, as on a loaded
    machine: the reader is told the upstream failed, not that it was slow."""
    calls = []

    def failing(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(503)

    async def stall() -> None:
        await asyncio.sleep(0.05)  # while the client waits to retry
        time.sleep(0.4)  # noqa: ASYNC251 - the whole loop stalls past the deadline, on purpose

    client = client_of(failing, retries=3, backoff=0.2)
    with pytest.raises(UpstreamError) as failed:
        async with upstream_deadline(0.3):
            await asyncio.gather(client.get_json("/flaky"), stall())
    assert not isinstance(failed.value, UpstreamTimeout)
    assert "503" in failed.value.message
    assert len(calls) == 1
    await client.aclose()


async def test_a_failure_noted_under_a_nested_deadline_reaches_the_request() -> None:
    """The core computes a coalesced answer in a task of its own, under a deadline of its own;
    the upstream's failure it noted is what the reader hears when the request's deadline ends."""

    async def computation() -> None:
        async with upstream_deadline(60):
            note_failure(UpstreamError("The upstream answered HTTP 503."))
            await asyncio.sleep(60)

    tasks = []
    with pytest.raises(UpstreamError) as failed:
        async with upstream_deadline(0.1):
            tasks.append(asyncio.create_task(computation()))
            await asyncio.sleep(60)
    assert not isinstance(failed.value, UpstreamTimeout)
    assert "503" in failed.value.message
    with pytest.raises(UpstreamError):
        await tasks[0]


async def test_a_retry_that_does_not_fit_is_not_waited_for() -> None:
    calls = []

    def busy(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(429, headers={"Retry-After": "2"})

    client = client_of(busy, max_retry_wait=5)
    started = time.monotonic()
    with pytest.raises(RateLimited) as limited:
        async with upstream_deadline(1.0):
            await client.get_json("/busy")
    assert time.monotonic() - started < 0.5
    assert len(calls) == 1
    assert limited.value.retry_after == 2
    await client.aclose()


async def test_deadlines_nest_to_the_earlier_one() -> None:
    assert remaining() is None
    async with upstream_deadline(5), upstream_deadline(60):
        left = remaining()
        assert left is not None and left <= 5
    assert remaining() is None


async def test_bodies_are_capped_after_decompression() -> None:
    bomb = gzip.compress(b"0" * 1_000_000)

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=bomb, headers={"Content-Encoding": "gzip"})

    client = client_of(answer, max_body_bytes=100_000)
    with pytest.raises(UpstreamError, match="more than 100000 bytes"):
        await client.get_json("/bomb")
    await client.aclose()


async def test_a_declared_length_over_the_cap_is_refused_unread() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"x" * 2000)

    client = client_of(answer, max_body_bytes=1000)
    with pytest.raises(UpstreamError, match="more than 1000 bytes"):
        await client.get_json("/big")
    await client.aclose()


async def test_an_encoding_lie_is_an_upstream_error() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"{}", headers={"Content-Encoding": "gzip"})

    client = client_of(answer)
    with pytest.raises(UpstreamError, match="does not match its encoding"):
        await client.get_json("/lie")
    await client.aclose()


async def test_redirects_are_followed_a_few_times_only() -> None:
    calls = []

    def loop(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(302, headers={"Location": str(request.url)})

    client = client_of(loop, max_redirects=3)
    with pytest.raises(UpstreamError, match="more than 3 times"):
        await client.get_json("/loop")
    assert len(calls) == 4
    await client.aclose()


async def test_html_error_pages_are_not_echoed() -> None:
    def page(request: httpx.Request) -> httpx.Response:
        html = "<html><h1>Bad gateway</h1><script>track()</script></html>"
        return httpx.Response(503, text=html, headers={"Content-Type": "text/html"})

    client = client_of(page)
    with pytest.raises(UpstreamError) as failed:
        await client.get_json("/down")
    assert "<" not in failed.value.message and "track" not in failed.value.message
    await client.aclose()


def test_clean_text_is_one_short_printable_line() -> None:
    assert clean_text("a\nb\x00c\x1b[31m", 100) == "a b c [31m"
    assert len(clean_text("x" * 1000, 50)) == 50


def test_json_nesting_is_bounded() -> None:
    with pytest.raises(UpstreamError, match="not readable JSON"):
        parse_json(b"[" * 100_000 + b"]" * 100_000)


class Page(TypedDict):
    total: int
    items: list[str]


@pytest.mark.parametrize(
    "body",
    [
        b'{"total": 1e400, "items": []}',
        b'{"total": "abc", "items": []}',
        b'{"total": 1, "items": "x"}',
        b"7",
    ],
)
def test_payloads_of_the_wrong_shape_are_upstream_errors(body: bytes) -> None:
    with pytest.raises(UpstreamError, match=r"expected shape|not readable"):
        parse_payload(body, TypeAdapter(Page), "a page")


async def test_gather_bounds_concurrency_and_fails_like_one_request() -> None:
    running = peak = 0

    async def work(n: int) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        if n == 7:
            raise UpstreamError("page 7 failed")
        return n

    assert await gather(*(work(n) for n in range(6)), limit=2) == tuple(range(6))
    assert peak == 2
    with pytest.raises(UpstreamError, match="page 7"):
        await gather(*(work(n) for n in range(20)), limit=3)


async def test_a_long_hint_holds_the_budget_so_nothing_more_is_sent() -> None:
    calls = []

    def busy(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(429, headers={"Retry-After": "600"})

    client = client_of(busy, limiter=Throttle("test long hint", 100, 1), max_retry_wait=5)
    with pytest.raises(RateLimited):
        await client.get_json("/busy")
    with pytest.raises(RateLimited) as again:
        await client.get_json("/other")
    assert len(calls) == 1
    assert again.value.retry_after is not None and 590 < again.value.retry_after <= 600
    await client.aclose()
