"""Cached public answers come back from the edge, for exactly as long as the core keeps them."""

import asyncio
from typing import Any

import pytest

from toshokan.edge.replay import RECHECK_SECONDS

pytestmark = pytest.mark.anyio
SEARCH = {"page": 1, "sort": "title"}


async def test_repeated_answers_are_replayed_byte_for_byte(make_host):
    async with make_host() as host:
        first = await host.client.get("/catalog/title-001")
        replays = [await host.client.get("/catalog/title-001") for _ in range(3)]
        calls = host.source("catalog").calls["manga"]
    assert calls == 1
    for again in replays:
        assert again.content == first.content
        assert again.headers["etag"] == first.headers["etag"]
        assert again.headers["cache-control"] == "public, max-age=900"


async def test_replay_answers_if_none_match_with_304(make_host):
    async with make_host() as host:
        etag = (await host.client.get("/catalog/title-002")).headers["etag"]
        again = await host.client.get("/catalog/title-002", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == etag


async def test_search_replay_keys_on_the_body(make_host):
    async with make_host() as host:
        a = await host.client.post("/catalog/search", json=SEARCH)
        b = await host.client.post("/catalog/search", json={**SEARCH, "page": 2})
        a_again = await host.client.post("/catalog/search", json=SEARCH)
        calls = host.source("catalog").calls["search"]
    assert a.json()["page"] == 1 and b.json()["page"] == 2
    assert a_again.content == a.content
    assert calls == 2


async def test_invalidation_drops_the_replay_at_once(make_host):
    async with make_host() as host:
        await host.client.get("/catalog/title-003")
        await host.client.get("/")
        host.services.content_changed("catalog")
        await host.client.get("/catalog/title-003")
        await host.client.get("/")
        calls = host.source("catalog").calls["manga"]
        manifest = await host.client.get("/")
    assert calls == 2
    assert manifest.status_code == 200


async def test_replay_ends_when_the_core_entry_expires(make_host):
    async with make_host() as host:
        await host.client.get("/catalog/title-004")
        host.core.cache.clear()  # what expiry or eviction does to the entry
        await asyncio.sleep(RECHECK_SECONDS * 1.5)
        await host.client.get("/catalog/title-004")
        calls = host.source("catalog").calls["manga"]
    assert calls == 2


async def test_cache_disabled_means_no_replay(make_host):
    async with make_host(cache={"manga": 0}) as host:
        for _ in range(3):
            await host.client.get("/catalog/title-005")
        calls = host.source("catalog").calls["manga"]
    assert calls == 3


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": "Bearer tok-abcdef"},
        {"Cookie": "session=1"},
        {"X-Forwarded-For": "198.51.100.1"},
        {"X-API-Key": "key-123456"},
    ],
)
async def test_credentialed_or_forwarded_requests_take_the_full_path(make_host, headers):
    async with make_host() as host:
        edge = host.app.middleware_stack
        reached = count_requests(edge)
        await host.client.get("/catalog/title-006")
        await host.client.get("/catalog/title-006")
        replayed = len(reached)
        again = await host.client.get("/catalog/title-006", headers=headers)
    assert replayed == 1  # the second plain request never reached the application
    assert again.status_code == 200 and len(reached) == 2
    assert len(edge.replay) == 1


def count_requests(edge: Any) -> list[str]:
    """Wrap the application behind ``edge``; the paths that reached it."""
    reached: list[str] = []
    inner = edge.app

    async def counting(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            reached.append(scope["path"])
        await inner(scope, receive, send)

    edge.app = counting
    return reached


async def test_credentialed_answers_are_never_replayed_to_others(make_host):
    async with make_host(auth="bearer", required=False) as host:
        mine = await host.client.get(
            "/catalog/title-007", headers={"Authorization": "Bearer tok-abcdef"}
        )
        theirs = await host.client.get("/catalog/title-007")
        edge = host.app.middleware_stack
    assert mine.headers["cache-control"].startswith("private")
    assert theirs.headers["cache-control"].startswith("public")
    assert len(edge.replay) == 1


async def test_errors_and_no_store_answers_are_not_replayed(make_host):
    async with make_host() as host:
        for _ in range(2):
            await host.client.get("/catalog/no-such-title")
            await host.client.get("/catalog/title-001/chapters/c1")
        edge = host.app.middleware_stack
    assert len(edge.replay) == 0


async def test_replay_keys_on_host_and_query(make_host):
    async with make_host() as host:
        reached = count_requests(host.app.middleware_stack)
        await host.client.get("/catalog/title-008")
        await host.client.get("/catalog/title-008", headers={"Host": "other.example"})
        await host.client.get("/catalog/title-008?page=2")
        await host.client.get("/catalog/title-008")
    assert len(reached) == 3


async def test_the_one_pass_and_the_full_path_find_each_others_answers(make_host):
    """A plain GET is looked up by the edge's one pass, which makes its key in line; one with
    If-None-Match or Origin by the full path, through ReplayTable.key: the two keys are one."""
    async with make_host() as host:
        reached = count_requests(host.app.middleware_stack)
        etag = (await host.client.get("/catalog/title-010?page=2")).headers["etag"]
        conditional = await host.client.get(
            "/catalog/title-010?page=2", headers={"If-None-Match": etag}
        )
        elsewhere = {"Origin": "https://elsewhere.example"}
        first = await host.client.get("/catalog/title-011", headers=elsewhere)
        plain = await host.client.get("/catalog/title-011")
    assert conditional.status_code == 304
    assert plain.status_code == 200 and plain.content == first.content
    assert reached == ["/catalog/title-010", "/catalog/title-011"]


async def test_head_is_answered_by_the_application(make_host):
    async with make_host() as host:
        get = await host.client.get("/catalog/title-009")
        head = await host.client.head("/catalog/title-009")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["etag"] == get.headers["etag"]
