"""Replicas sharing one Redis ask an upstream as one host: one request per search, one budget.

The replicas are real `toshokan serve` processes; MangaDex is the test suite's
fake, served on a loopback port that every replica's `[sources.mangadex]` points at.
"""

import asyncio
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.cluster.replicas import Replica, replicas
from tests.cluster.upstream import most_in_any_window, served
from tests.sources.mangadex.fake import FakeMangaDex

SEARCH = {"page": 1, "sort": "relevance", "direction": "desc"}


@pytest.fixture
def fake() -> FakeMangaDex:
    fake = FakeMangaDex(latency=0.3)  # long enough for the second replica to ask meanwhile
    for key, title in (("a", "Alpha"), ("b", "Beta"), ("c", "Gamma")):
        fake.add_manga(key, title)
    return fake


@pytest.fixture
def upstream(fake: FakeMangaDex) -> Iterator[str]:
    with served(fake.app) as base:
        yield base


def write_config(path: Path, redis_url: str, upstream: str, extra: str = "") -> Path:
    # One public address, as behind a load balancer: links (and so answers) are the same.
    path.write_text(
        f"""
[host]
secret = "one-secret-for-every-replica"
public_url = "https://comics.example.org"

[cluster]
redis = "{redis_url}"

[limits]
rate_limit = 0

[sources.mangadex]
api_url = "{upstream}"
uploads_url = "{upstream}/uploads"
search_available_languages_only = false
{extra}
""",
        encoding="utf-8",
    )
    return path


def search(replica: Replica, query: str) -> httpx.Response:
    body = {**SEARCH, "query": query}
    return httpx.post(f"{replica.url}/mangadex/search", json=body, timeout=30)


def searches_upstream(fake: FakeMangaDex) -> list[float]:
    return [r.at for r in fake.calls(r"^/manga$")]


def test_one_upstream_request_for_a_search_asked_on_two_replicas(
    tmp_path: Path, redis_url: str, upstream: str, fake: FakeMangaDex
) -> None:
    config = write_config(tmp_path / "toshokan.toml", redis_url, upstream)
    with replicas(config, tmp_path, 2) as (first, second), ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda r: search(r, "alpha"), [first, second, first, second]))
    assert [a.status_code for a in answers] == [200] * 4
    assert len({a.content for a in answers}) == 1
    assert answers[0].json()["results"][0]["title"] == "Alpha"
    assert len(searches_upstream(fake)) == 1


def test_a_workers_host_asks_the_upstream_once(
    tmp_path: Path, redis_url: str, upstream: str, fake: FakeMangaDex
) -> None:
    config = write_config(tmp_path / "toshokan.toml", redis_url, upstream)
    with replicas(config, tmp_path, 1, workers=2) as (host,), ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda _: search(host, "beta"), range(6)))
    assert [a.status_code for a in answers] == [200] * 6
    assert len({a.content for a in answers}) == 1
    assert len(searches_upstream(fake)) == 1


def test_the_whole_host_keeps_to_the_published_rate(
    tmp_path: Path, redis_url: str, upstream: str, fake: FakeMangaDex
) -> None:
    fake.latency = 0.0
    config = write_config(tmp_path / "toshokan.toml", redis_url, upstream)
    queries = [f"query {n}" for n in range(16)]  # distinct: none is answered from the cache

    async def ask_all(started: list[Replica]) -> list[httpx.Response]:
        async with httpx.AsyncClient(timeout=30) as client:
            return await asyncio.gather(
                *(
                    client.post(
                        f"{started[n % 2].url}/mangadex/search", json={**SEARCH, "query": q}
                    )
                    for n, q in enumerate(queries)
                )
            )

    with replicas(config, tmp_path, 2) as started:
        began = time.monotonic()
        answers = asyncio.run(ask_all(started))
        elapsed = time.monotonic() - began
    assert [a.status_code for a in answers] == [200] * 16
    times = searches_upstream(fake)
    assert len(times) == 16
    # MangaDex's 5 a second for both replicas together: 16 searches take at least 3 s
    # (bursts at 0, 1, 2 and 3 s), where each replica counting alone would take 1 s.
    assert elapsed >= 3.0
    # Counted on arrival, as MangaDex counts: a loaded machine delays an arrival up to about
    # a second behind its grant, so any 2 s hold at most what 3 s allow. Replicas counting
    # each alone would send all 16 within about a second.
    assert most_in_any_window(times, 2.0) <= 5 * (2 + 1)


def test_a_replica_killed_mid_search_leaves_it_to_another(
    tmp_path: Path, redis_url: str, upstream: str, fake: FakeMangaDex
) -> None:
    fake.latency = 2.0
    config = write_config(tmp_path / "toshokan.toml", redis_url, upstream)
    with replicas(config, tmp_path, 2) as (first, second), ThreadPoolExecutor(2) as pool:
        lost = pool.submit(search, first, "gamma")
        deadline = time.monotonic() + 10
        while not searches_upstream(fake) and time.monotonic() < deadline:
            time.sleep(0.02)
        waiting = pool.submit(search, second, "gamma")  # waits for the first replica's answer
        time.sleep(0.3)
        first.kill()
        answer = waiting.result(timeout=30)
        assert lost.exception() is not None  # its client saw the connection go
    # The second replica took over once the killed one's lease lapsed, within the deadline.
    assert answer.status_code == 200
    assert answer.json()["results"][0]["title"] == "Gamma"
    assert len(searches_upstream(fake)) == 2


def test_an_upstreams_pause_holds_for_every_replica(
    tmp_path: Path, redis_url: str, upstream: str, fake: FakeMangaDex
) -> None:
    fake.latency = 0.0
    fake.script(r"^/manga$", status=429, headers={"Retry-After": "3600"}, times=100)
    config = write_config(tmp_path / "toshokan.toml", redis_url, upstream)
    with replicas(config, tmp_path, 2) as (first, second):
        told = search(first, "delta")
        time.sleep(0.3)  # the pause reaches Redis in the background
        paused = [search(second, "epsilon"), search(first, "zeta")]
    assert told.status_code == 429
    assert [a.status_code for a in paused] == [429, 429]
    assert {a.headers["Retry-After"] for a in [told, *paused]} <= {"3600", "3599"}
    assert len(searches_upstream(fake)) == 1  # "not for an hour" was heard by the whole host
