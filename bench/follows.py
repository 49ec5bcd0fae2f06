"""Checking 10,000 followed series (100 readers, 100 series each) on the fake MangaDex: upstream
requests per cycle, the time of a cycle at MangaDex's published rate, the host's CPU per
check, and the p99 of a spec search while a cycle runs next to without, in one run.

Why: a series is checked once per interval however many readers follow it, and a cycle asks
MangaDex once for the latest uploaded chapter of 100 series at a time (``/manga?ids[]=``),
reading the feed only of those whose latest moved (and of each once a day). The figures say
what a cycle costs the upstream (requests), the operator (time at 5 requests a second,
MangaDex's rate for the whole host) and the host (CPU per check, and what readers feel: a
search's p99 while checks run).

Rows (in-process ASGI; the fake MangaDex runs in the same process):

- ``requests``: upstream requests of a cycle (``follows check`` of everything) over the
  series checked: the first (every series read whole: what exists), a quiet one (nothing
  new) and one where 1% of the series have a new chapter;
- ``CPU per check``: process CPU of an unthrottled cycle over its checks, less the fake's own
  CPU for the same requests (replayed alone), so it is the host's: for a cycle reading every
  feed, and for a quiet one;
- ``cycle at 5/s``: a host on the same database and fake, under the adapter's own budget
  (MangaDex's 5 requests a second): a quiet cycle of every series, then one with 1% new;
- ``search p99``: ``POST /local/search`` on the local library (uncached), one after another,
  alone and while a cycle runs: at MangaDex's rate (what a host does), and a cycle reading
  every feed unthrottled (the worst a cycle can do to the process); the ratios are what
  checks cost readers.

Run::

    .venv/bin/python bench/follows.py                  # a few minutes
    .venv/bin/python bench/follows.py --series 2000    # quicker
"""

import argparse
import asyncio
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.timing import median_ms, p99_ms
from tests.sources.mangadex.fake import API, T0, UPLOADS, FakeMangaDex

from toshokan.sdk import throttle
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, serve_host

READERS = 100
SEARCH = {"page": 1, "sort": "title", "query": ""}
#: The share of series given a new chapter before a "some new" cycle.
NEW_SHARE = 0.01


def make_fake(series: int) -> FakeMangaDex:
    fake = FakeMangaDex(validate=False)
    for n in range(series):
        manga = fake.add_manga(f"bench-{n}", f"Bench {n}", covers=[])
        fake.add_chapter(manga, "1", title="One")
    return fake


def follow_all(host: ServedHost, fake: FakeMangaDex) -> None:
    """Each reader follows its share of the series: the rows ``FollowStore.follow`` writes,
    in one transaction (the setup is not what is measured)."""
    now = time.time()
    with host.core.database.transaction() as cursor:
        for n, manga in enumerate(fake.manga.values()):
            cursor.execute(
                "INSERT INTO followed_series(source, manga, title, publication, state, "
                "next_check, failures) VALUES('mangadex', ?, ?, 'Ongoing', 'new', ?, 0)",
                (manga.id, manga.title["en"], now),
            )
            cursor.execute(
                "INSERT INTO follows(reader, source, manga, since) VALUES(?, 'mangadex', ?, ?)",
                (f"reader{n % READERS}", manga.id, now),
            )


def publish_some(fake: FakeMangaDex, round_number: int) -> int:
    """A new chapter in every hundredth series; how many."""
    ids = list(fake.manga)
    step = int(1 / NEW_SHARE)
    for manga in ids[round_number % step :: step]:
        fake.add_chapter(
            fake.manga[manga], str(round_number + 2), publish_at=T0 + timedelta(days=round_number)
        )
    return len(ids[round_number % step :: step])


def read_in_full_next(host: ServedHost) -> None:
    """Every series' feed is read at its next check (as a day after its last full read)."""
    with host.core.database.transaction() as cursor:
        cursor.execute("UPDATE followed_series SET full_check = 0")


@dataclass(frozen=True)
class Cycle:
    """One cycle's wall and CPU seconds, its checks, upstream requests and chapters found."""

    seconds: float
    cpu: float
    checks: int
    requests: int
    new: int


async def cycle(host: ServedHost, fake: FakeMangaDex, concurrency: int) -> Cycle:
    """One check of every followed series in this process."""
    before = len(fake.requests)
    wall, cpu = time.perf_counter(), time.process_time()
    _, outcomes = await host.core.follows.check_here(None, concurrency=concurrency)
    assert all(o.state == "ok" for o in outcomes), {o.state for o in outcomes}
    seconds, spent = time.perf_counter() - wall, time.process_time() - cpu
    new = sum(o.new for o in outcomes)
    return Cycle(seconds, spent, len(outcomes), len(fake.requests) - before, new)


async def fake_cpu(fake: FakeMangaDex, since: int, until: int) -> float:
    """CPU the fake spends answering its requests ``since``..``until`` again, asked directly."""
    import httpx

    asked = fake.requests[since:until]
    async with httpx.AsyncClient(transport=fake.transport(), base_url=API) as client:
        cpu = time.process_time()
        for request in asked:
            await client.get(request.path, params=tuple(request.query))
        spent = time.process_time() - cpu
    del fake.requests[until:]
    return spent


async def searches(host: ServedHost, count: int) -> list[float]:
    times = []
    for n in range(count):
        started = time.perf_counter()
        answer = await host.client.post("/local/search", json={**SEARCH, "query": f"q{n}"})
        times.append(time.perf_counter() - started)
        assert answer.status_code == 200
    return times


async def searches_during(host: ServedHost, running: "asyncio.Task[Cycle]") -> list[float]:
    busy: list[float] = []
    while not running.done():
        busy += await searches(host, 10)
    return busy


def report(during: str, quiet: list[float], busy: list[float]) -> None:
    print(
        f"search p99 ({during}) {p99_ms(quiet):.1f} ms alone, {p99_ms(busy):.1f} ms during it "
        f"(x{p99_ms(busy) / p99_ms(quiet):.2f}; {len(busy)} searches); medians "
        f"{median_ms(quiet):.1f} and {median_ms(busy):.1f} ms"
    )


def requests_row(name: str, done: Cycle) -> None:
    print(
        f"requests, {name:<14} {done.requests} for {done.checks} series "
        f"({done.requests / done.checks:.3f} per series; {done.new} new chapters found)"
    )


def sources(library: Path) -> dict[str, tuple[type, object]]:
    return {
        "mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS)),
        "local": (LocalLibrary, LocalSettings(root=library, watch=False)),
    }


async def run(series: int, concurrency: int, search_count: int) -> None:
    fake = make_fake(series)
    with tempfile.TemporaryDirectory() as tmp:
        library, data = Path(tmp) / "library", Path(tmp) / "data"
        write_demo_library(library, series=20, chapters=3, pages=2)
        options = {
            "upstream": fake.transport(),
            "data_dir": data,
            "limits": {"rate_limit": 0},
            "cache": {"max_entries": 0},
            "follows": {"enabled": False},
        }
        # Unthrottled: the budget's windows are fixed by the first throttle of its name.
        throttle.reset()
        throttle.Throttle("api.fake-mangadex.test api", 1_000_000, 1)
        async with serve_host(sources(library), **options) as host:  # type: ignore[arg-type]
            await host.core.follows.open()  # a check may queue jobs, as `follows check` does
            await asyncio.to_thread(follow_all, host, fake)
            print(f"series followed          {series} by {READERS} readers")
            mark = len(fake.requests)
            first = await cycle(host, fake, concurrency)
            first_fake = await fake_cpu(fake, mark, mark + first.requests)
            requests_row("first", first)
            mark = len(fake.requests)
            quiet = await cycle(host, fake, concurrency)
            quiet_fake = await fake_cpu(fake, mark, mark + quiet.requests)
            requests_row("nothing new", quiet)
            publish_some(fake, 0)
            some = await cycle(host, fake, concurrency)
            requests_row("1% new", some)
            for name, done, alone in (
                ("every feed", first, first_fake),
                ("quiet", quiet, quiet_fake),
            ):
                print(
                    f"CPU per check, {name:<10} {(done.cpu - alone) / done.checks * 1000:.3f} ms host "
                    f"({done.cpu / done.checks * 1000:.3f} ms with the fake's "
                    f"{alone / done.checks * 1000:.3f} ms; cycle {done.seconds:.1f} s)"
                )
            alone_times = await searches(host, search_count)
            await asyncio.to_thread(read_in_full_next, host)
            running = asyncio.create_task(cycle(host, fake, concurrency))
            busy = await searches_during(host, running)
            report("a cycle reading every feed, unthrottled", alone_times, busy)
        # MangaDex's published rate, as the adapter's default budget holds it, on the same
        # database (what the cycles above recorded) and fake.
        throttle.reset()
        async with serve_host(sources(library), **options) as host:  # type: ignore[arg-type]
            alone_times = await searches(host, search_count)
            running = asyncio.create_task(cycle(host, fake, concurrency))
            busy = await searches_during(host, running)
            paced = running.result()
            report("a quiet cycle at 5/s", alone_times, busy)
            print(
                f"cycle at 5/s, quiet      {paced.checks} series in {paced.seconds:.1f} s "
                f"({paced.requests} requests, {paced.requests / paced.seconds:.2f}/s)"
            )
            publish_some(fake, 1)
            paced = await cycle(host, fake, concurrency)
            print(
                f"cycle at 5/s, 1% new     {paced.checks} series in {paced.seconds:.1f} s "
                f"({paced.requests} requests, {paced.requests / paced.seconds:.2f}/s; "
                f"{paced.new} new chapters); every feed read instead: "
                f"{paced.checks / 5 / 60:.1f} min"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--series", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--searches", type=int, default=300)
    options = parser.parse_args()
    asyncio.run(run(options.series, options.concurrency, options.searches))


if __name__ == "__main__":
    main()
