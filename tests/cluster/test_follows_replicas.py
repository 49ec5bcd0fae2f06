"""Two replicas and a ``--workers 2`` host on Redis and PostgreSQL follow the same 200 series:
each series is checked exactly once per interval by one process of the host, and a replica
killed by SIGKILL while one of its checks is at the upstream leaves nothing unchecked and
nothing checked twice: the only series asked again within an interval are those the killed
replica had been answered for and had not recorded when it died (a check whose result was
lost), and they are asked once more, after their leases lapse.

The upstream is the fake MangaDex on a loopback port, behind a gate that counts the answers
it gives, per series (a ``/manga?ids[]=`` list answers for each series it names, a feed for
its own), and can hold a request from a chosen replica: the kill lands while that replica's
check is in flight, by construction, not by timing."""

import asyncio
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

from tests.cluster.replicas import replicas, start_replica
from tests.cluster.upstream import connected_from, process_group, served
from tests.sources.mangadex.fake import FakeMangaDex

SERIES = 200
INTERVAL = 60
#: How long a check holds its series: the upstream deadline and the lease's margin.
LEASE = 15 + 15
#: What the queue, the rounds (2 s) and a loaded machine may add to a check's time.
SLACK = 15
#: Seconds within which a series' feed follows the list by ids of the same check.
ONE_CHECK = 5


@dataclass(frozen=True)
class Answer:
    at: float
    series: tuple[str, ...]
    #: A title's feed (else a list of titles by id).
    feed: bool
    #: Whether it went to the replica the test kills.
    to_killed: bool


class Gate:
    """ASGI middleware over the fake: records each request answered whole (with the series it
    answered for), and when armed holds the first request from ``pids()`` until released
    (its process is killed meanwhile: that request is never answered)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.answers: list[Answer] = []
        self.lock = threading.Lock()
        self.pids: set[int] = set()
        self.armed = threading.Event()
        self.holding = threading.Event()
        self.released = threading.Event()
        self.held: tuple[str, ...] = ()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        series = _series(scope["path"], scope["query_string"].decode())
        to_killed = bool(series) and connected_from(scope["client"][1], self.pids)
        if to_killed and self.armed.is_set():
            self.armed.clear()
            self.held = series
            self.holding.set()
            await asyncio.to_thread(self.released.wait)
            return  # its process is gone: there is no one to answer

        async def sending(message: Any) -> None:
            await send(message)
            end = message["type"] == "http.response.body" and not message.get("more_body")
            if end and series:
                with self.lock:
                    feed = scope["path"].endswith("/feed")
                    self.answers.append(Answer(time.monotonic(), series, feed, to_killed))

        await self.app(scope, receive, sending)

    def checks(self) -> dict[str, list[Answer]]:
        """Each series' checks, as the answers for it: each answer, but the feed read right
        after a list by ids showed the series' latest chapter moved, which is the same check."""
        with self.lock:
            answers = list(self.answers)
        found: dict[str, list[Answer]] = {}
        listed: dict[str, float] = {}  # when a list by ids last answered for the series
        for answer in answers:
            for manga in answer.series:
                checks = found.setdefault(manga, [])
                if answer.feed and 0 <= answer.at - listed.get(manga, -ONE_CHECK) < ONE_CHECK:
                    listed.pop(manga)  # the feed of a series its list showed had moved
                    continue
                checks.append(answer)
                if not answer.feed:
                    listed[manga] = answer.at
        return found

    def times(self) -> dict[str, list[float]]:
        return {manga: [a.at for a in checks] for manga, checks in self.checks().items()}


def _series(path: str, query: str) -> tuple[str, ...]:
    """The series a request asks about for a check: a list by ids, or one title's feed."""
    if path == "/manga":
        return tuple(parse_qs(query).get("ids[]", []))
    parts = path.split("/")
    if len(parts) == 4 and parts[1] == "manga" and parts[3] == "feed":
        return (parts[2],)
    return ()


@pytest.fixture
def fake() -> FakeMangaDex:
    fake = FakeMangaDex()
    for n in range(SERIES):
        manga = fake.add_manga(f"series-{n}", f"Series {n}")
        fake.add_many_chapters(manga, 3)
    return fake


@pytest.fixture
def gate(fake: FakeMangaDex) -> Gate:
    return Gate(fake.app)


@pytest.fixture
def upstream(gate: Gate) -> Iterator[str]:
    with served(gate) as base:
        yield base


def wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:g} s")
        time.sleep(0.2)


def hold_a_check_of(gate: Gate, seconds: float) -> tuple[str, ...]:
    """Arm the gate for the next check of the replica to kill; the series of the request held."""
    gate.armed.set()
    if not gate.holding.wait(seconds):
        raise AssertionError(f"no check of the replica reached the upstream in {seconds:g} s")
    return gate.held


def test_each_series_is_checked_once_per_interval_across_replicas_and_a_kill(
    tmp_path: Path,
    redis_url: str,
    postgres_url: str,
    upstream: str,
    gate: Gate,
    fake: FakeMangaDex,
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

[server]
upstream_timeout = 15

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
    mangas = list(fake.manga)
    with replicas(config, tmp_path, 2) as (first, second):
        workers = start_replica(config, tmp_path / "workers", workers=2)
        gate.pids = process_group(first.process.pid)
        assert gate.pids
        try:
            hosts = [first, second, workers]
            with ThreadPoolExecutor(6) as pool:
                answers = list(
                    pool.map(
                        lambda pair: httpx.put(
                            f"{hosts[pair[0] % 3].url}/_/follows/series/mangadex/{pair[1]}",
                            timeout=60,
                        ),
                        enumerate(mangas),
                    )
                )
            assert {a.status_code for a in answers} == {201}

            def checks_of_each(least: int) -> int:
                times = gate.times()
                return sum(len(times.get(m, [])) >= least for m in mangas)

            # The first check of each series records what exists.
            wait_for(lambda: checks_of_each(1) == SERIES, 60, "every first check")
            # The next interval: when half of it is checked, the gate holds a check of the
            # first replica at the upstream, and the replica is killed there.
            wait_for(lambda: checks_of_each(2) >= SERIES // 2, INTERVAL + SLACK, "half the checks")
            held = hold_a_check_of(gate, INTERVAL)
            first.kill()
            killed_at = time.monotonic()
            gate.released.set()
            # The interrupted checks are redone once the series' leases lapse; then one more
            # whole interval.
            wait_for(lambda: checks_of_each(2) == SERIES, LEASE + SLACK + 30, "the redone checks")
            wait_for(
                lambda: checks_of_each(4) == SERIES,
                2 * INTERVAL + LEASE + 2 * SLACK,
                "two more intervals",
            )
            time.sleep(3)
            checks = gate.checks()
        finally:
            workers.stop()
    assert held
    assert set(checks) == set(mangas)
    interrupted = []
    for manga in mangas:
        moments = [answer.at for answer in checks[manga]]
        gaps = [b - a for a, b in itertools.pairwise(moments)]
        # Never twice in an interval, but for a check the killed replica had been answered
        # for and had not recorded yet (it is redone once its lease lapses): its answer was
        # the killed replica's, just before the kill.
        close = [
            (a, b) for a, b in itertools.pairwise(checks[manga]) if b.at - a.at <= INTERVAL - 2
        ]
        for a, b in close:
            assert a.to_killed and a.at <= killed_at < b.at, (manga, gaps)
            assert b.at - a.at < LEASE + SLACK, (manga, gaps)
        assert len(close) <= 1, (manga, gaps)
        interrupted += [manga] * len(close)
        # Never an interval without a check, but for the check held at the upstream when the
        # replica was killed, which is redone once its lease lapses: at most one gap that long,
        # spanning the kill (none when the held answer was the killed replica's and counted).
        late = [(a, b) for a, b in itertools.pairwise(moments) if b - a > INTERVAL + SLACK]
        if manga in held:
            assert len(late) <= 1, (manga, moments)
            for before, after in late:
                assert before < killed_at < after, (manga, moments)
                assert after - before < INTERVAL + LEASE + SLACK, (manga, moments)
        else:
            assert late == [], (manga, gaps)
        # The next interval after the kill checks everything.
        assert any(killed_at < t < killed_at + INTERVAL + LEASE + SLACK for t in moments)
    # Only what the killed replica was checking at once is redone: its jobs (4 at a time)
    # of at most 100 series each.
    assert len(interrupted) + len(held) <= 4 * 100
    times = {manga: [answer.at for answer in found] for manga, found in checks.items()}
    requests = len(gate.answers)
    print(
        f"answers: {requests} for {SERIES} series over {max(len(t) for t in times.values())} "
        f"intervals; the kill held the check of {len(held)} series at the upstream and "
        f"interrupted {len(interrupted)} answered but not recorded"
    )
