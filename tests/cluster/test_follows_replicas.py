"""Two replicas and a ``--workers 2`` host on Redis and PostgreSQL follow the same 200 series:
each series is checked once per interval by one process of the host, and a replica killed by
SIGKILL in the middle of a batch of checks leaves nothing unchecked and nothing checked twice
in the next interval. The upstream is the fake MangaDex on a loopback port; its requests are
what is counted."""

import itertools
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.cluster.replicas import replicas, start_replica
from tests.cluster.upstream import served
from tests.sources.mangadex.fake import FakeMangaDex

SERIES = 200
INTERVAL = 60


@pytest.fixture
def fake() -> FakeMangaDex:
    fake = FakeMangaDex(latency=0.2)  # checks stay in flight long enough to be killed midway
    for n in range(SERIES):
        manga = fake.add_manga(f"series-{n}", f"Series {n}")
        fake.add_many_chapters(manga, 3)
    return fake


@pytest.fixture
def upstream(fake: FakeMangaDex) -> Iterator[str]:
    with served(fake.app) as base:
        yield base


def feed_times(fake: FakeMangaDex) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {manga: [] for manga in fake.manga}
    for request in fake.calls(r"^/manga/[^/]+/feed$"):
        times[request.path.split("/")[2]].append(request.at)
    return times


def wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:g} s")
        time.sleep(0.2)


def test_each_series_is_checked_once_per_interval_across_replicas_and_a_kill(
    tmp_path: Path, redis_url: str, postgres_url: str, upstream: str, fake: FakeMangaDex
) -> None:
    config = tmp_path / "toshokan.toml"
    config.write_text(
        f"""
[host]
secret = "one-secret-for-every-replica"
public_url = "https://comics.example.org"

[cluster]
redis = "{redis_url}"
database = "{postgres_url}"

[limits]
rate_limit = 0

[follows]
interval = {INTERVAL}
jitter = 0
round = 2

[sources.mangadex]
api_url = "{upstream}"
uploads_url = "{upstream}/uploads"
requests_per_second = 20
""",
        encoding="utf-8",
    )
    with replicas(config, tmp_path, 2) as (first, second):
        workers = start_replica(config, tmp_path / "workers", workers=2)
        try:
            hosts = [first, second, workers]
            with ThreadPoolExecutor(6) as pool:
                answers = list(
                    pool.map(
                        lambda pair: httpx.put(
                            f"{hosts[pair[0] % 3].url}/_/follows/series/mangadex/{pair[1]}",
                            timeout=60,
                        ),
                        enumerate(fake.manga),
                    )
                )
            assert {a.status_code for a in answers} == {201}
            # The first check of each series records what exists.
            wait_for(lambda: all(feed_times(fake).values()), 60, "every first check")
            first_round = max(min(t) for t in feed_times(fake).values())

            # The next interval's checks: SIGKILL a replica when half of them are done.
            def second_checks() -> int:
                return sum(len(t) >= 2 for t in feed_times(fake).values())

            wait_for(lambda: second_checks() >= SERIES // 2, INTERVAL + 60, "half the checks")
            first.kill()
            killed_at = time.monotonic()
            wait_for(lambda: second_checks() == SERIES, 90, "the interrupted checks redone")
            # The interval after the kill: every series checked again.
            wait_for(
                lambda: all(max(t) > killed_at + 40 for t in feed_times(fake).values()),
                INTERVAL + 60,
                "the next interval's checks",
            )
            time.sleep(5)
            times = feed_times(fake)
        finally:
            workers.stop()
    assert first_round > 0
    redone = []
    for manga, moments in times.items():
        gaps = list(itertools.pairwise(moments))
        # Never twice in an interval, but for a check the kill interrupted and its redo.
        close = [(a, b) for a, b in gaps if b - a < INTERVAL - 3]
        assert all(a <= killed_at < b for a, b in close), (manga, moments, killed_at)
        assert len(close) <= 1, (manga, moments)
        redone += [manga] * len(close)
        # Never an interval without a check (the queue and a loaded machine add some delay).
        assert all(b - a < INTERVAL + 30 for a, b in gaps), (manga, moments)
    # The replica killed was running four checks at most (its concurrency).
    assert len(redone) <= 4, redone
    print(
        f"feed requests: {sum(len(t) for t in times.values())} for {SERIES} series; "
        f"checks redone after the kill: {len(redone)}"
    )
