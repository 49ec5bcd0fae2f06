"""Failures: every upstream failure maps to the spec's code, with MangaDex's own detail."""

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from toshokan.errors import (
    ChapterNotFound,
    MangaNotFound,
    RateLimited,
    UpstreamError,
    UpstreamTimeout,
)
from toshokan.models import SearchRequest
from toshokan.sdk import RequestContext
from toshokan.sources.mangadex import MangaDex, Settings

from .fake import API, UPLOADS, FakeMangaDex, error_body
from .services import USER_AGENT, FakeServices

pytestmark = pytest.mark.anyio
CTX = RequestContext()
BROWSE = SearchRequest(page=1, sort="latest")


async def test_honest_user_agent(fake: FakeMangaDex, source: MangaDex) -> None:
    manga = fake.add_manga("m", "M")
    chapter = fake.add_chapter(manga, "1")
    await source.search(BROWSE, CTX)
    await source.manga(manga.id, CTX)
    await source.chapters(manga.id, CTX)
    await source.pages(manga.id, chapter.id, CTX)
    await source.ping()
    assert {r.user_agent for r in fake.requests} == {USER_AGENT}


async def test_429_with_a_short_hint_is_waited_out(fake: FakeMangaDex, source: MangaDex) -> None:
    # MangaDex's hint is an epoch second; two seconds ahead means a wait of one to two seconds.
    fake.script(
        "^/manga$", status=429, headers={"X-RateLimit-Retry-After": str(int(time.time()) + 2)}
    )
    result = await source.search(BROWSE, CTX)
    assert result.results == []
    refused, answered = fake.calls("^/manga$")
    assert answered.at - refused.at >= 0.9


async def test_429_retry_after_seconds_is_waited_out(fake: FakeMangaDex, source: MangaDex) -> None:
    fake.script("^/manga$", status=429, headers={"Retry-After": "1"})
    started = time.monotonic()
    await source.search(BROWSE, CTX)
    assert time.monotonic() - started >= 0.9
    assert len(fake.calls("^/manga$")) == 2


async def test_429_with_a_long_hint_is_rate_limited(fake: FakeMangaDex, source: MangaDex) -> None:
    fake.script(
        "^/manga$", status=429, headers={"X-RateLimit-Retry-After": str(int(time.time()) + 60)}
    )
    with pytest.raises(RateLimited) as raised:
        await source.search(BROWSE, CTX)
    assert raised.value.retry_after is not None and 55 <= raised.value.retry_after <= 60
    assert 55 <= int(raised.value.headers["Retry-After"]) <= 60
    assert raised.value.code == "RATE_LIMITED"
    assert len(fake.calls("^/manga$")) == 1


async def test_404s_are_the_matching_not_found(fake: FakeMangaDex, source: MangaDex) -> None:
    manga = fake.add_manga("m", "M")
    chapter = fake.add_chapter(manga, "1")
    fake.script("^/manga/[^/]+$", status=404)
    with pytest.raises(MangaNotFound):
        await source.manga(manga.id, CTX)
    fake.script("/feed$", status=404)
    with pytest.raises(MangaNotFound):
        await source.chapters(manga.id, CTX)
    fake.script("^/at-home/", status=404)
    with pytest.raises(ChapterNotFound) as raised:
        await source.pages(manga.id, chapter.id, CTX)
    assert raised.value.code == "CHAPTER_NOT_FOUND"


async def test_server_errors_carry_mangadex_detail(fake: FakeMangaDex, source: MangaDex) -> None:
    body = error_body(503, "The database is having a nap.")
    fake.script("^/manga$", status=503, body=body, times=3)
    with pytest.raises(UpstreamError) as raised:
        await source.search(BROWSE, CTX)
    assert raised.value.code == "UPSTREAM_ERROR" and raised.value.status == 502
    assert "Service Unavailable: The database is having a nap." in raised.value.message
    assert len(fake.calls("^/manga$")) == 3  # the first try and two retries


async def test_a_transient_server_error_is_retried(fake: FakeMangaDex, source: MangaDex) -> None:
    fake.script("^/manga$", status=500)
    assert (await source.search(BROWSE, CTX)).results == []
    assert len(fake.calls("^/manga$")) == 2


async def test_refused_request_carries_mangadex_detail(
    fake: FakeMangaDex, source: MangaDex
) -> None:
    fake.script(
        "^/manga$", status=400, body=error_body(400, "Error validating /offset: must be <= 10000")
    )
    with pytest.raises(UpstreamError) as raised:
        await source.search(BROWSE, CTX)
    assert "Bad Request: Error validating /offset" in raised.value.message
    assert len(fake.calls("^/manga$")) == 1  # a 400 is not retried


async def test_slow_upstream_is_a_timeout(fake: FakeMangaDex, tmp_path: Path) -> None:
    services = FakeServices(user_agent=USER_AGENT, data_dir=tmp_path, secret=b"s", http_timeout=0.2)
    services.fake_transport = fake.transport()
    source = MangaDex("mangadex", Settings(api_url=API, uploads_url=UPLOADS), services)
    fake.script("^/manga$", status=200, delay=1.0, times=3)  # slower than the deadline, every try
    try:
        with pytest.raises(UpstreamTimeout) as raised:
            await source.search(BROWSE, CTX)
    finally:
        await services.aclose()
    assert raised.value.status == 504 and raised.value.code == "UPSTREAM_TIMEOUT"
    assert len(fake.calls("^/manga$")) == 3  # timeouts are retried, then reported


async def test_unreadable_data_is_upstream_error(fake: FakeMangaDex, source: MangaDex) -> None:
    fake.script("^/manga$", status=200, body={"result": "ok", "data": "not a list"})
    with pytest.raises(UpstreamError) as raised:
        await source.search(BROWSE, CTX)
    assert raised.value.status == 502
    fake.script("^/manga/[^/]+$", status=200, body="<html>maintenance</html>")
    with pytest.raises(UpstreamError):
        await source.manga(fake.add_manga("m", "M").id, CTX)


async def test_ping(fake: FakeMangaDex, source: MangaDex) -> None:
    await source.ping()
    assert [r.path for r in fake.requests] == ["/ping"]
    fake.ping_text = "maintenance"
    with pytest.raises(UpstreamError):
        await source.ping()
    fake.script("^/ping$", status=503, times=3)
    with pytest.raises(UpstreamError):
        await source.ping()


async def test_a_long_wait_pauses_every_request_until_it_expires(
    fake: FakeMangaDex, source: MangaDex, make_source: Callable[..., MangaDex]
) -> None:
    manga = fake.add_manga("m", "M")
    fake.script("^/manga$", status=429, headers={"Retry-After": "30"})
    with pytest.raises(RateLimited):
        await source.search(BROWSE, CTX)
    sent = len(fake.requests)
    # Another request, even from another MangaDex source of the process, is not sent at all.
    with pytest.raises(RateLimited) as raised:
        await make_source().manga(manga.id, CTX)
    assert raised.value.retry_after is not None and 25 < raised.value.retry_after <= 30
    assert len(fake.requests) == sent
    with pytest.raises(RateLimited):
        await source.chapters(manga.id, CTX)
    assert len(fake.requests) == sent
