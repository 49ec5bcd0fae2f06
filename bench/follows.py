"""Checking 10,000 followed series (100 readers, 100 series each) on the fake MangaDex: upstream
requests per cycle, the time of a cycle at MangaDex's published rate, the host's CPU per
check, and the p99 of a spec search while a cycle runs next to without, in one run.

Why: a series is checked once per interval however many readers follow it, with one
request (the feed's newest page), under the source's host-wide budget. The figures say
what a cycle costs the upstream (requests), the operator (time at 5 requests a second,
MangaDex's rate for the whole host) and the host (CPU per check, and what readers feel:
a search's p99 while checks run).

Rows (in-process ASGI; the fake MangaDex runs in the same process):

- ``requests``: upstream requests of one full cycle (``follows check`` of everything,
  nothing new) over the series checked;
- ``cycle at 5/s``: a cycle of ``--paced`` series under the real 5 requests/s budget,
  its measured time, and what 10,000 series take at that rate;
- ``CPU per check``: process CPU of an unthrottled cycle of every series over the checks,
  less the fake's own CPU for the same requests (measured alone), so it is the host's;
- ``search p99``: ``POST /local/search`` on the local library (uncached), one after
  another, alone and while a cycle runs: at MangaDex's rate (what a host does) and
  unthrottled (the worst a cycle can do to the process); the ratios are what checks cost
  readers.

Run::

    .venv/bin/python bench/follows.py                  # a few minutes
    .venv/bin/python bench/follows.py --series 2000    # quicker
"""

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.sources.mangadex.fake import API, UPLOADS, FakeMangaDex

from toshokan.sdk import throttle
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, serve_host

READERS = 100
SEARCH = {"page": 1, "sort": "title", "query": ""}


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


async def cycle(host: ServedHost, concurrency: int) -> tuple[float, float, int]:
    """One check of every followed series in this process: (seconds, CPU seconds, checks)."""
    wall, cpu = time.perf_counter(), time.process_time()
    _, outcomes = await host.core.follows.check_here(None, concurrency=concurrency)
    assert all(o.state == "ok" for o in outcomes), {o.state for o in outcomes}
    return time.perf_counter() - wall, time.process_time() - cpu, len(outcomes)


async def fake_cpu(fake: FakeMangaDex, count: int) -> float:
    """CPU the fake spends answering ``count`` feed requests, asked directly."""
    import httpx

    ids = list(fake.manga)
    transport = fake.transport()
    async with httpx.AsyncClient(transport=transport, base_url=API) as client:
        cpu = time.process_time()
        for n in range(count):
            await client.get(f"/manga/{ids[n % len(ids)]}/feed", params={"limit": "500"})
        return time.process_time() - cpu


async def searches(host: ServedHost, count: int) -> list[float]:
    times = []
    for n in range(count):
        started = time.perf_counter()
        answer = await host.client.post("/local/search", json={**SEARCH, "query": f"q{n}"})
        times.append(time.perf_counter() - started)
        assert answer.status_code == 200
    return times


def p99(times: list[float]) -> float:
    return statistics.quantiles(times, n=100)[98] * 1000


def report(during: str, quiet: list[float], busy: list[float]) -> None:
    print(
        f"search p99 ({during}) {p99(quiet):.1f} ms alone, {p99(busy):.1f} ms during it "
        f"(x{p99(busy) / p99(quiet):.2f}; {len(busy)} searches); medians "
        f"{statistics.median(quiet) * 1000:.1f} and {statistics.median(busy) * 1000:.1f} ms"
    )


async def run(series: int, paced: int, concurrency: int, search_count: int) -> None:
    fake = make_fake(series)
    with tempfile.TemporaryDirectory() as tmp:
        library = Path(tmp) / "library"
        write_demo_library(library, series=20, chapters=3, pages=2)
        # Unthrottled rows: the budget's windows are fixed by the first throttle of its name.
        throttle.reset()
        throttle.Throttle("api.fake-mangadex.test api", 1_000_000, 1)
        sources = {
            "mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS)),
            "local": (LocalLibrary, LocalSettings(root=library, watch=False)),
        }
        async with serve_host(
            sources,
            upstream=fake.transport(),
            data_dir=Path(tmp) / "data",
            limits={"rate_limit": 0},
            cache={"max_entries": 0},
            follows={"enabled": False},
        ) as host:
            await asyncio.to_thread(follow_all, host, fake)
            await cycle(host, concurrency)  # the first: records what exists
            before = len(fake.requests)
            seconds, cpu, checks = await cycle(host, concurrency)
            requests = len(fake.requests) - before
            alone = await fake_cpu(fake, checks)
            print(f"series followed          {checks} by {READERS} readers")
            print(f"requests per cycle       {requests} ({requests / checks:.2f} per series)")
            print(f"unthrottled cycle        {seconds:.1f} s")
            print(
                f"CPU per check            {(cpu - alone) / checks * 1000:.2f} ms host "
                f"({cpu / checks * 1000:.2f} ms with the fake's {alone / checks * 1000:.2f} ms)"
            )
            quiet = await searches(host, search_count)
            running = asyncio.create_task(cycle(host, concurrency))
            await asyncio.sleep(0.5)
            busy = await searches(host, search_count)
            await running
            report("unthrottled cycle", quiet, busy)
    # MangaDex's published rate, as the adapter's default budget holds it.
    small = make_fake(paced)
    with tempfile.TemporaryDirectory() as tmp:
        library = Path(tmp) / "library"
        write_demo_library(library, series=20, chapters=3, pages=2)
        throttle.reset()
        async with serve_host(
            {
                "mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS)),
                "local": (LocalLibrary, LocalSettings(root=library, watch=False)),
            },
            upstream=small.transport(),
            data_dir=Path(tmp) / "data",
            limits={"rate_limit": 0},
            cache={"max_entries": 0},
            follows={"enabled": False},
        ) as host:
            await asyncio.to_thread(follow_all, host, small)
            await cycle(host, concurrency)
            quiet = await searches(host, search_count)
            before = len(small.requests)
            running = asyncio.create_task(cycle(host, concurrency))
            busy: list[float] = []
            while not running.done():
                busy += await searches(host, 20)
            seconds, _, checks = await running
            report("cycle at 5/s", quiet, busy)
            requests = len(small.requests) - before
            rate = requests / seconds
            print(
                f"cycle at 5/s             {checks} series in {seconds:.1f} s ({rate:.2f} requests/s); "
                f"{series} series: {series * requests / checks / 5 / 60:.1f} min"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--series", type=int, default=10_000)
    parser.add_argument("--paced", type=int, default=150, help="series of the 5/s cycle")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--searches", type=int, default=300)
    options = parser.parse_args()
    asyncio.run(run(options.series, options.paced, options.concurrency, options.searches))


if __name__ == "__main__":
    main()
