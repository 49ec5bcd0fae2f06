"""The shared upstream client maps every upstream failure as DECISIONS.md rules."""

import time

import httpx
import pytest
import respx

from toshokan.errors import (
    InvalidCredentials,
    MangaNotFound,
    RateLimited,
    UpstreamError,
    UpstreamTimeout,
)
from toshokan.sdk import UpstreamClient

pytestmark = pytest.mark.anyio
API = "https://upstream.example"


@pytest.fixture
async def client():
    upstream = UpstreamClient(
        API, user_agent="toshokan/9.9 (+https://example.org)", retries=2, backoff=0.01
    )
    yield upstream
    await upstream.aclose()


@respx.mock
async def test_success_and_user_agent(client):
    route = respx.get(f"{API}/ok").respond(json={"fine": True})
    assert await client.get_json("/ok") == {"fine": True}
    assert route.calls.last.request.headers["user-agent"] == "toshokan/9.9 (+https://example.org)"


@respx.mock
async def test_retries_transient_failures_then_succeeds(client):
    route = respx.get(f"{API}/flaky").mock(
        side_effect=[httpx.Response(503), httpx.ConnectError("boom"), httpx.Response(200, json=[1])]
    )
    assert await client.get_json("/flaky") == [1]
    assert route.call_count == 3


@respx.mock
async def test_gives_up_after_bounded_retries(client):
    route = respx.get(f"{API}/down").respond(500, text="database on fire")
    with pytest.raises(UpstreamError, match="HTTP 500: database on fire"):
        await client.get_json("/down")
    assert route.call_count == 3


@respx.mock
async def test_post_is_not_retried(client):
    route = respx.post(f"{API}/login").respond(503)
    with pytest.raises(UpstreamError):
        await client.request("POST", "/login")
    assert route.call_count == 1


@respx.mock
async def test_timeout_maps_to_upstream_timeout(client):
    respx.get(f"{API}/slow").mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(UpstreamTimeout):
        await client.get_json("/slow")


@respx.mock
@pytest.mark.parametrize("status", [401, 403])
async def test_auth_rejections(client, status):
    respx.get(f"{API}/private").respond(status, text="token expired")
    with pytest.raises(InvalidCredentials, match="token expired"):
        await client.get_json("/private")


@respx.mock
async def test_not_found_uses_the_callers_error(client):
    respx.get(f"{API}/manga/x").respond(404, text="no such manga")
    with pytest.raises(MangaNotFound, match="no such manga"):
        await client.get_json("/manga/x", not_found=MangaNotFound)


@respx.mock
async def test_other_client_errors_are_upstream_errors(client):
    respx.get(f"{API}/bad").respond(400, text="offset too large")
    with pytest.raises(UpstreamError, match="HTTP 400: offset too large"):
        await client.get_json("/bad")


@respx.mock
async def test_unparseable_json(client):
    respx.get(f"{API}/html").respond(200, text="<html>")
    with pytest.raises(UpstreamError, match="not readable JSON"):
        await client.get_json("/html")


@respx.mock
async def test_short_429_is_waited_out(client):
    route = respx.get(f"{API}/busy").mock(
        side_effect=[
            httpx.Response(429, headers={"Retry-After": "0.2"}),
            httpx.Response(200, json={}),
        ]
    )
    started = time.monotonic()
    assert await client.get_json("/busy") == {}
    assert time.monotonic() - started >= 0.2 and route.call_count == 2


@respx.mock
async def test_long_429_is_rate_limited_with_hint(client):
    epoch = time.time() + 120
    respx.get(f"{API}/busy").respond(429, headers={"X-RateLimit-Retry-After": str(int(epoch))})
    with pytest.raises(RateLimited) as raised:
        await client.get_json("/busy")
    assert 100 <= int(raised.value.headers["Retry-After"]) <= 121


@respx.mock
async def test_rate_is_held():
    limited = UpstreamClient(API, user_agent="t", rate_per_second=10)
    respx.get(f"{API}/x").respond(json={})
    import asyncio

    started = time.monotonic()
    await asyncio.gather(*(limited.get_json("/x") for _ in range(25)))
    # Never more than 10 in any second: bursts at 0, 1 and 2 s, so at least 2 s (1.5 s for a
    # leaky bucket, which admits a full burst on top of the rate).
    assert time.monotonic() - started >= 1.4
    await limited.aclose()
