"""The server-side cache: identical concurrent requests cost one adapter call."""

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from toshokan.core.cache import Kind, ResultCache

pytestmark = pytest.mark.anyio


async def test_concurrent_identical_requests_coalesce(make_client):
    async with make_client(sources={"catalog": {"delay": 0.2}}) as (client, hosted_sources):
        responses = await asyncio.gather(*(client.get("/catalog/title-003") for _ in range(25)))
        searches = await asyncio.gather(
            *(
                client.post("/catalog/search", json={"page": 1, "sort": "title", "query": "1"})
                for _ in range(10)
            )
        )
        calls = hosted_sources.by_slug["catalog"].source.calls
    assert {r.status_code for r in responses} == {200}
    assert len({r.content for r in responses}) == 1
    assert calls["manga"] == 1
    assert {r.status_code for r in searches} == {200} and calls["search"] == 1


async def test_different_requests_are_not_shared(make_client):
    async with make_client() as (client, hosted_sources):
        await client.get("/catalog/title-001")
        await client.get("/catalog/title-002")
        await client.post("/catalog/search", json={"page": 1, "sort": "title"})
        await client.post("/catalog/search", json={"page": 2, "sort": "title"})
        calls = hosted_sources.by_slug["catalog"].source.calls
    assert calls["manga"] == 2 and calls["search"] == 2


async def test_page_lists_are_never_cached(make_client):
    async with make_client() as (client, hosted_sources):
        for _ in range(3):
            await client.get("/catalog/title-001/chapters/c1")
        assert hosted_sources.by_slug["catalog"].source.calls["pages"] == 3


async def test_failures_are_not_cached():
    cache = ResultCache({"manga": 60}, 100)
    attempts = 0

    async def flaky() -> str:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise RuntimeError("first try fails")
        return "ok"

    with pytest.raises(RuntimeError):
        await cache.get_or_compute("manga", "k", flaky)
    assert await cache.get_or_compute("manga", "k", flaky) == "ok"
    assert await cache.get_or_compute("manga", "k", flaky) == "ok"
    assert attempts == 2


async def test_a_kind_bounded_by_bytes_keeps_each_body_once() -> None:
    """What faces keep through the cache (the Alethia face's translations) is rendered once per
    key, within a bound in bytes rather than a count."""
    cache = ResultCache({"rendered": Kind(ttl=60, max_bytes=100)}, 1000)
    calls: list[str] = []

    def render(text: str) -> Callable[[], Awaitable[bytes]]:
        async def compute() -> bytes:
            calls.append(text)
            return text.encode()

        return compute

    assert await cache.get_or_compute("rendered", "a", render("first")) == b"first"
    assert await cache.get_or_compute("rendered", "a", render("second")) == b"first"
    assert await cache.get_or_compute("rendered", "b", render("other")) == b"other"
    assert calls == ["first", "other"]


async def test_a_kind_bounded_by_bytes_stays_within_its_bound() -> None:
    cache = ResultCache({"rendered": Kind(ttl=60, max_bytes=100)}, 1000)

    async def forty() -> bytes:
        return b"x" * 40

    for n in range(10):
        await cache.get_or_compute("rendered", n, forty)
    rendered_again: list[int] = []

    def again(n: int) -> Callable[[], Awaitable[bytes]]:
        async def compute() -> bytes:
            rendered_again.append(n)
            return b"x" * 40

        return compute

    for n in range(10):
        await cache.get_or_compute("rendered", n, again(n))
    assert rendered_again[:8] == list(range(8))  # only two of 40 bytes fit in 100

    async def huge() -> bytes:
        return b"y" * 1000

    async def other() -> bytes:
        return b"z"

    assert await cache.get_or_compute("rendered", "huge", huge) == b"y" * 1000  # not kept
    assert await cache.get_or_compute("rendered", "huge", other) == b"z"


async def test_a_cancelled_waiter_does_not_cancel_the_others():
    cache = ResultCache({"manga": 60}, 100)
    release = asyncio.Event()

    async def slow() -> str:
        await release.wait()
        return "done"

    first = asyncio.create_task(cache.get_or_compute("manga", "k", slow))
    second = asyncio.create_task(cache.get_or_compute("manga", "k", slow))
    await asyncio.sleep(0)
    first.cancel()
    release.set()
    assert await second == "done"


async def test_credentials_separate_cache_entries(make_client):
    async with make_client(sources={"catalog": {"auth": "bearer"}}) as (client, hosted_sources):
        await client.get("/catalog/title-001", headers={"Authorization": "Bearer a"})
        await client.get("/catalog/title-001", headers={"Authorization": "Bearer b"})
        await client.get("/catalog/title-001", headers={"Authorization": "Bearer a"})
        assert hosted_sources.by_slug["catalog"].source.calls["manga"] == 2


async def test_cached_answers_are_kept_per_origin(make_client):
    # An adapter may link back to the host (local page and cover URLs); one origin's cached
    # answer must not reach a reader who came through another.
    async with make_client() as (client, hosted_sources):
        for origin in ("a.example", "b.example", "a.example"):
            await client.get("/catalog/title-001", headers={"Host": origin})
        assert hosted_sources.by_slug["catalog"].source.calls["manga"] == 2
