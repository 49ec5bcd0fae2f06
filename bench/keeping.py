"""Benchmark: kept copies beside readers.

1. A reader's requests while background work saturates an upstream budget, next to when
   nothing else runs, in the same run. The fake MangaDex (in process) answers in
   ``--latency`` seconds; its API budget is ``--rate`` requests a second (the page-list
   budget is set out of the way, so the API's is the one saturated). The reader asks for a
   chapter's page list (``GET /mangadex/<manga>/chapters/<chapter>``, what a reader opening
   a chapter asks; two API requests) every ``--every`` seconds, ``--requests`` times, in three
   phases: alone; beside ``--workers`` tasks asking page lists as fast as the budget allows,
   marked as background work (``toshokan.sdk.background``, as kept copies are); and beside
   the same tasks unmarked (what downloads would cost readers without the mark).
2. CPU and memory per kept chapter: ``--chapters`` chapters of ``--pages`` pages of about
   ``--page-kb`` kB each are kept (``Keeper.keep``) into a local library; the baseline is a
   reader reading the same chapters' pages through the host's page proxy, same run. Memory is
   the Python heap's peak during one chapter (``tracemalloc``), next to the chapter's size.

3. The download queue against the budget's ceiling, and a reader beside it, same run:
   ``--queued`` chapters of ``--series`` kept series (backfilled; the queue keeps one chapter
   of a series at a time) are kept by the host's own queue
   (``[keep] concurrency`` ``--concurrency``) under MangaDex's published budgets (5 API
   requests a second, ``--at-home`` page lists a minute, of which background work may take
   four fifths); chapters kept per minute next to that ceiling (downloads are budget-bound,
   not CPU-bound), counted over the first ``--minutes`` whole minutes of a queue that does not
   run dry in them (a moving window lets a full minute's allowance go at once at the start
   and the next one a minute later, so only whole minutes compare with a rate a minute),
   with the most page lists of any minute and API requests of any second the fake saw, the
   process's CPU and peak memory per chapter, and the p99 of a reader's
   request for a chapter's page list (the budget the queue spends) while the queue is full,
   next to the same requests while it is empty (a chapter opened every ``--reader-every``
   seconds: within the fifth of the page lists the budget keeps for readers).

Run: ``python bench/keeping.py [--rate 20] [--requests 50] [--chapters 8] [--queued 80]``
"""

import argparse
import asyncio
import contextlib
import io
import os
import random
import resource
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from pathlib import Path
from typing import Any

import httpx
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the fake MangaDex of the tests stands in for the real one

from bench.timing import median_ms, p99_ms  # noqa: E402
from tests.sources.mangadex.fake import API, REPORT, UPLOADS, FakeMangaDex  # noqa: E402
from tests.sources.mangadex.image_servers import ImageServers  # noqa: E402

from toshokan.core.answers import Caller  # noqa: E402
from toshokan.sdk import Throttle, background, throttle  # noqa: E402
from toshokan.sdk.throttle import reserved  # noqa: E402
from toshokan.sources.local import LocalLibrary, LocalSettings  # noqa: E402
from toshokan.sources.mangadex import MangaDex, Settings  # noqa: E402
from toshokan.sources.mangadex.limits import AT_HOME_READERS_SHARE  # noqa: E402
from toshokan.testing import ServedHost, serve_host  # noqa: E402

BASE = "http://testserver"


def build_fake(latency: float, chapters: int, pages: int) -> tuple[FakeMangaDex, str, list[str]]:
    fake = FakeMangaDex(latency=latency, validate=False)
    manga = fake.add_manga("bench", "A Kept Series", description={"en": "Kept for the bench."})
    group = fake.add_group("Bench Scans")
    made = fake.add_many_chapters(manga, chapters, group)
    for chapter in made:
        chapter.pages = pages
    return fake, manga.id, [c.id for c in made]


def jpeg_of(kilobytes: int) -> bytes:
    """A JPEG of about ``kilobytes`` kB (noise compresses badly, as scans do)."""
    side = int((kilobytes * 1024 / 1.2) ** 0.5)
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(out, "JPEG", quality=90)
    return out.getvalue()


def hosting(
    servers: ImageServers, data: Path, rate: float, library: Path | None = None
) -> AbstractAsyncContextManager[ServedHost]:
    throttle.reset()
    # The page-list budget is registered first, out of the way: the API's is the one measured.
    Throttle(f"{httpx.URL(API).netloc.decode()} at-home", 100_000, 60)
    sources: dict[str, Any] = {
        "mangadex": (
            MangaDex,
            Settings(api_url=API, uploads_url=UPLOADS, report_url=REPORT, requests_per_second=rate),
        )
    }
    if library is not None:
        sources["local"] = (LocalLibrary, LocalSettings(root=library, watch=False))
    return serve_host(
        sources,
        upstream=servers,
        data_dir=data,
        limits={"rate_limit": 0, "image_rate_limit": 0},
        cache={"max_entries": 0},  # every reader's request goes upstream
    )


async def reader_phase(
    host: ServedHost,
    manga: str,
    chapters: list[str],
    *,
    load: str,
    workers: int,
    requests: int,
    every: float,
) -> list[float]:
    """The reader's request times while ``load`` ("none", "background", "unmarked") runs."""
    stop = asyncio.Event()
    caller = Caller({}, BASE)

    async def busy() -> None:
        with background() if load == "background" else nullcontext():
            while not stop.is_set():
                visit = await host.core.visit("mangadex", caller)
                # A timeout under a full budget: keep pressing.
                with contextlib.suppress(Exception):
                    await visit.pages(manga, random.choice(chapters))

    tasks = [asyncio.create_task(busy()) for _ in range(workers if load != "none" else 0)]
    await asyncio.sleep(1.5)  # the budget saturated
    times = []
    try:
        for n in range(requests):
            started = time.perf_counter()
            answer = await host.client.get(
                f"/mangadex/{manga}/chapters/{chapters[n % len(chapters)]}"
            )
            times.append(time.perf_counter() - started)
            assert answer.status_code == 200, answer.text
            await asyncio.sleep(max(0.0, every - times[-1]))
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    return times


async def readers_beside_background(args: argparse.Namespace) -> None:
    fake, manga, chapters = build_fake(args.latency, 40, 3)
    with tempfile.TemporaryDirectory() as data:
        async with hosting(ImageServers(fake), Path(data), args.rate) as host:
            rows = []
            for load in ("none", "background", "unmarked"):
                times = await reader_phase(
                    host,
                    manga,
                    chapters,
                    load=load,
                    workers=args.workers,
                    requests=args.requests,
                    every=args.every,
                )
                rows.append((load, times))
    base = p99_ms(rows[0][1])
    print(
        f"reader's page list, API budget {args.rate:g}/s saturated by {args.workers} tasks, "
        f"fake latency {args.latency * 1000:.0f} ms, {args.requests} requests a row"
    )
    print(f"{'load':<28}{'median ms':>10}{'p99 ms':>10}{'p99 ratio':>11}")
    for load, times in rows:
        label = {
            "none": "alone",
            "background": "beside background work",
            "unmarked": "beside unmarked work",
        }[load]
        print(
            f"{label:<28}{median_ms(times):>10.1f}{p99_ms(times):>10.1f}{p99_ms(times) / base:>10.2f}x"
        )


async def cost_per_chapter(args: argparse.Namespace) -> None:
    fake, manga, chapters = build_fake(0.0, args.chapters, args.pages)
    servers = ImageServers(fake)
    servers.body = jpeg_of(args.page_kb)
    with tempfile.TemporaryDirectory() as folder:
        library = Path(folder) / "library"
        library.mkdir()
        async with hosting(servers, Path(folder) / "data", 20, library) as host:
            caller = Caller({}, BASE)

            async def read(chapter: str) -> None:
                visit = await host.core.visit("mangadex", caller)
                for url in (await visit.pages(manga, chapter)).value:
                    link = host.core.images.signed_url(BASE, "mangadex", url)
                    assert (await host.client.get(link)).status_code == 200

            async def keep(chapter: str) -> None:
                await host.core.keeper.keep("mangadex", manga, chapter)

            async def cpu(call: Callable[[str], Awaitable[None]], chapter: str) -> float:
                started = time.process_time()
                await call(chapter)
                return time.process_time() - started

            half = len(chapters) // 2
            kept_cpu, read_cpu = [], []
            for chapter in chapters[:half]:  # taking turns: both see the same machine
                read_cpu.append(await cpu(read, chapter))
                kept_cpu.append(await cpu(keep, chapter))
            tracemalloc.start()
            peaks = []
            for chapter in chapters[half:]:
                tracemalloc.reset_peak()
                before = tracemalloc.get_traced_memory()[0]
                await keep(chapter)
                peaks.append(tracemalloc.get_traced_memory()[1] - before)
            tracemalloc.stop()
            sizes = [p.stat().st_size for p in library.rglob("*.cbz")]
    chapter_mb = sum(sizes) / len(sizes) / 1e6
    keep_ms = sum(kept_cpu) / len(kept_cpu) * 1000
    read_ms = sum(read_cpu) / len(read_cpu) * 1000
    peak_mb = max(peaks) / 1e6
    print(f"\nkept chapters: {len(sizes)} of {args.pages} pages, {chapter_mb:.1f} MB each")
    print(
        f"CPU per chapter: kept {keep_ms:.0f} ms, read through the page proxy {read_ms:.0f} ms "
        f"(x{keep_ms / read_ms:.2f})"
    )
    print(
        f"Python heap peak while keeping one chapter: {peak_mb:.2f} MB "
        f"({peak_mb / chapter_mb:.2f} of the chapter's size); process max RSS "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
    )


async def queue_against_the_ceiling(args: argparse.Namespace) -> None:
    # ``--series`` kept series (the queue keeps one chapter of a series at a time), the reader
    # reading the first.
    each = args.queued // args.series
    fake, manga, chapters = build_fake(args.latency, each, args.pages_queued)
    group = next(iter(fake.groups.values()))
    others = []
    for n in range(1, args.series):
        other = fake.add_manga(f"bench-{n}", f"Kept Series {n}")
        for chapter in fake.add_many_chapters(other, each, group):
            chapter.pages = args.pages_queued
        others.append(other.id)
    servers = ImageServers(fake)
    servers.body = jpeg_of(args.page_kb)
    throttle.reset()
    with tempfile.TemporaryDirectory() as folder:
        library = Path(folder) / "library"
        library.mkdir()
        sources: dict[str, Any] = {
            "mangadex": (
                MangaDex,
                Settings(
                    api_url=API,
                    uploads_url=UPLOADS,
                    report_url=REPORT,
                    at_home_per_minute=args.at_home,
                ),
            ),
            "local": (LocalLibrary, LocalSettings(root=library, watch=False)),
        }
        async with serve_host(
            sources,
            upstream=servers,
            data_dir=Path(folder) / "data",
            limits={"rate_limit": 0, "image_rate_limit": 0},
            follows={"round": 1},
            keep={"concurrency": args.concurrency, "source_concurrency": args.concurrency},
        ) as host:
            core = host.core
            for slug in (manga, *others):
                await core.follows.follow("", "mangadex", slug)
                while True:
                    series = await asyncio.to_thread(core.follows.store.series, "mangadex", slug)
                    if series is not None and series.state == "ok":
                        break
                    await asyncio.sleep(0.1)

            async def reader(count: int, until: Callable[[], bool] = lambda: False) -> list[float]:
                times = []
                for n in range(count):
                    if until():
                        break
                    started = time.perf_counter()
                    answer = await host.client.get(
                        f"/mangadex/{manga}/chapters/{chapters[n % len(chapters)]}"
                    )
                    times.append(time.perf_counter() - started)
                    assert answer.status_code == 200, answer.text
                    await asyncio.sleep(max(0.0, args.reader_every - times[-1]))
                return times

            await reader(1)  # untimed: the first request's one-off costs are nobody's p99
            empty = await reader(args.reader_requests)
            await asyncio.sleep(60)  # the page-list window empties of the reader's requests
            measured = 60.0 * args.minutes
            lists_before = len(fake.calls(r"^/at-home/"))
            cpu_before = time.process_time()
            rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            started_at, started = time.time(), time.monotonic()
            for slug in (manga, *others):
                await core.downloads.keep("", "mangadex", slug, backfill=each)
            full = await reader(10**6, lambda: time.monotonic() - started >= measured)
            await asyncio.sleep(max(0.0, measured - (time.monotonic() - started)))
            cpu = time.process_time() - cpu_before
            rows = (await core.downloads.listing(None, limit=10_000)).downloads
            kept = [
                d for d in rows if d.state == "done" and (d.finished or 0) <= started_at + measured
            ]
            failed = sum(d.state == "failed" for d in rows)
            sizes = [p.stat().st_size for p in library.rglob("*.cbz")]
            lists = [r.at for r in fake.calls(r"^/at-home/")]
            api = [r.at for r in fake.requests if not r.path.startswith("/at-home/")]
            reader_lists = len(full)
    # Background work's share of the page lists, as MangaDex's adapter declares the budget.
    ceiling = args.at_home - reserved(args.at_home, AT_HOME_READERS_SHARE)
    per_minute = len(kept) / args.minutes
    print(
        f"\nthe queue: {len(rows)} chapters of {args.series} series queued ({failed} failed), "
        f"{args.pages_queued} pages of {sum(sizes) / max(1, len(sizes)) / 1e6:.1f} MB each, "
        f"concurrency {args.concurrency}; {len(kept)} kept in the first {args.minutes:g} "
        f"minute(s) of a queue that never ran dry"
    )
    print(
        f"chapters kept per minute: {per_minute:.1f}, against the ceiling of {ceiling} page "
        f"lists a minute for background work (x{per_minute / ceiling:.2f}); the reader's "
        f"{reader_lists} page lists came from the readers' fifth of the same budget"
    )
    most_lists = most_in_any_window(lists, 60.0)
    # The budget counts a page list when it is granted, the fake when it arrives: a window
    # the queue keeps full shows one more at the fake when one arrived later after its grant
    # than the one granted a minute after it; how much shorter than a minute that span is.
    over = (
        f", {most_lists} of them within {shortest_span(lists, most_lists):.2f} s"
        if most_lists > args.at_home
        else ""
    )
    print(
        f"upstream, the whole run, on arrival at the fake: at most {most_lists} page lists in "
        f"a minute (published {args.at_home}{over}; {len(lists) - lists_before} while "
        f"measured), at most {most_in_any_window(api, 1.0)} API requests in a second "
        f"(published 5)"
    )
    print(
        f"CPU per chapter kept: {cpu / max(1, len(kept)) * 1000:.0f} ms (the whole process over "
        f"the measured minutes, the reader's requests included); process max RSS "
        f"{rss_before / 1024:.0f} MB before the queue, "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB after"
    )
    print(
        f"reader's page list (every {args.reader_every:g} s): queue empty p99 "
        f"{p99_ms(empty):.0f} ms (median {median_ms(empty):.0f}, {len(empty)} requests), queue "
        f"full p99 {p99_ms(full):.0f} ms (median {median_ms(full):.0f}, {len(full)} requests), "
        f"x{p99_ms(full) / p99_ms(empty):.2f}"
    )


def most_in_any_window(times: list[float], width: float) -> int:
    """The most of ``times`` in any window of ``width`` seconds."""
    times = sorted(times)
    return max(
        (sum(1 for t in times[i:] if t - times[i] < width) for i in range(len(times))), default=0
    )


def shortest_span(times: list[float], count: int) -> float:
    """The shortest time ``count`` of ``times`` arrived in."""
    times = sorted(times)
    return min(times[i + count - 1] - times[i] for i in range(len(times) - count + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=20.0, help="API budget, requests/s")
    parser.add_argument("--latency", type=float, default=0.02, help="fake upstream's latency, s")
    parser.add_argument("--workers", type=int, default=8, help="tasks saturating the budget")
    parser.add_argument("--requests", type=int, default=50, help="reader's requests a row")
    parser.add_argument("--every", type=float, default=0.6, help="seconds between them")
    parser.add_argument("--chapters", type=int, default=8)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--page-kb", type=int, default=400)
    parser.add_argument("--skip-readers", action="store_true")
    parser.add_argument("--queued", type=int, default=80, help="chapters queued")
    parser.add_argument("--pages-queued", type=int, default=8, help="pages of each")
    parser.add_argument("--series", type=int, default=8, help="series they belong to")
    parser.add_argument("--at-home", type=int, default=40, help="page lists a minute")
    parser.add_argument("--concurrency", type=int, default=2, help="[keep] concurrency")
    parser.add_argument("--minutes", type=float, default=2, help="minutes the queue is measured")
    # A reader opening a chapter every 8 s: within the fifth of the page lists kept for readers.
    parser.add_argument("--reader-requests", type=int, default=8, help="with the queue empty")
    parser.add_argument("--reader-every", type=float, default=8.0)
    parser.add_argument("--only-queue", action="store_true")
    args = parser.parse_args()
    if not args.only_queue:
        if not args.skip_readers:
            asyncio.run(readers_beside_background(args))
        asyncio.run(cost_per_chapter(args))
    asyncio.run(queue_against_the_ceiling(args))


if __name__ == "__main__":
    main()
