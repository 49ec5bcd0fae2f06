"""Benchmark: the chapter list of a 2,000-chapter MangaDex title, through the fake API.

The fake MangaDex (tests/sources/mangadex/fake.py) runs in its own process behind
uvicorn, so its work does not compete with the adapter's and requests go
over real HTTP; every request takes an extra 100 ms (``--latency``), as a
round trip to api.mangadex.org might. Four ways to fetch the same feed are
timed, each on a fresh event loop and a full rate-limit allowance (budgets
are process-wide, so each run resets them), all under the adapter's default limit of 5 requests per second:

* ``adapter``: the adapter's ``chapters()`` (the concurrent feed, then mapping to spec Chapters);
* ``concurrent-500``: the feed alone, 500 chapters a page, the pages after the first at once;
* ``sequential-500``: the same 500-chapter pages one after another (the baseline);
* ``sequential-100``: 100-chapter pages one after another (a naive client: twenty requests).

Run: ``python bench/mangadex_feed.py [--chapters 2000] [--latency 0.1] [--rounds 3]``
(``--in-process`` serves the fake through ASGI in the same process instead).
"""

import argparse
import asyncio
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.sources.mangadex.fake, the stand-in for api.mangadex.org

from tests.sources.mangadex.fake import UPLOADS, FakeMangaDex  # noqa: E402

from toshokan.sdk import HostServices, RequestContext, UpstreamClient, throttle  # noqa: E402
from toshokan.sources.mangadex import MangaDex, Settings  # noqa: E402
from toshokan.sources.mangadex.feed import fetch_feed  # noqa: E402

WAYS = ("adapter", "concurrent-500", "sequential-500", "sequential-100")


class CountingTransport(httpx.AsyncBaseTransport):
    """Passes requests on and remembers each one's URL."""

    def __init__(self, inner: httpx.AsyncBaseTransport):
        self.inner = inner
        self.urls: list[httpx.URL] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.urls.append(request.url)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class BenchServices(HostServices):
    """Host services whose upstream clients send through one counting transport."""

    transport: CountingTransport | None = None

    def http_client(self, base_url: str = "", **options: Any) -> UpstreamClient:
        options.setdefault("transport", self.transport)
        return super().http_client(base_url, **options)


def build_fake(chapters: int, latency: float) -> tuple[FakeMangaDex, str]:
    fake = FakeMangaDex(latency=latency, validate=False)
    manga = fake.add_manga("bench", "A Very Long Series")
    fake.add_many_chapters(manga, chapters, fake.add_group("Bench Scans"))
    return fake, manga.id


async def run(
    api_url: str, inner: httpx.AsyncBaseTransport, manga_id: str, how: str
) -> tuple[float, int, int]:
    """(wall seconds, requests sent, chapters listed) for one way of fetching the feed."""
    services = BenchServices(
        user_agent="toshokan-bench/1.0", data_dir=Path(tempfile.gettempdir()), secret=b"b"
    )
    services.transport = counting = CountingTransport(inner)
    throttle.reset()  # a full allowance for every run, as a fresh process would have
    source = MangaDex("mangadex", Settings(api_url=api_url, uploads_url=UPLOADS), services)
    started = time.perf_counter()
    try:
        if how == "adapter":
            listed = len(await source.chapters(manga_id, RequestContext()))
        else:
            items = await fetch_feed(
                source.feed_page(manga_id),
                manga_id,
                page_size=100 if how == "sequential-100" else 500,
                concurrent=how == "concurrent-500",
            )
            listed = len(items)
        wall = time.perf_counter() - started
    finally:
        await services.aclose()
    pages = [
        (u.params.get("offset"), u.params.get("limit"))
        for u in counting.urls
        if u.path.endswith("/feed")
    ]
    assert len(set(pages)) == len(pages), "a feed page was fetched twice"
    return wall, len(counting.urls), listed


def serve(port: int, chapters: int, latency: float) -> None:
    """The child process: the fake API on 127.0.0.1:port."""
    import uvicorn

    fake, manga_id = build_fake(chapters, latency)
    print(manga_id, flush=True)
    uvicorn.run(fake.app, host="127.0.0.1", port=port, log_level="warning")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(chapters: int, latency: float) -> tuple[subprocess.Popen[str], str, str]:
    port = free_port()
    child = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve",
            str(port),
            "--chapters",
            str(chapters),
            "--latency",
            str(latency),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    manga_id = child.stdout.readline().strip()
    api_url = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            httpx.get(f"{api_url}/ping", timeout=1.0)
            break
        except httpx.TransportError:
            time.sleep(0.1)
    return child, api_url, manga_id


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chapters", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per fake request")
    parser.add_argument("--rounds", type=int, default=3, help="best of N rounds")
    parser.add_argument(
        "--in-process", action="store_true", help="serve the fake through ASGI in this process"
    )
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.chapters, args.latency)
        return

    child = None
    if args.in_process:
        fake, manga_id = build_fake(args.chapters, args.latency)
        api_url = "https://api.fake-mangadex.test"

        def transport() -> httpx.AsyncBaseTransport:
            return fake.transport()

        where = "in-process ASGI"
    else:
        child, api_url, manga_id = start_server(args.chapters, args.latency)

        def transport() -> httpx.AsyncBaseTransport:
            return httpx.AsyncHTTPTransport()

        where = "uvicorn, separate process"
    try:
        print(
            f"MangaDex feed: {args.chapters} chapters, {args.latency * 1000:.0f} ms per request, "
            f"5 requests/s limit, fake: {where}, best of {args.rounds}"
        )
        results = {}
        for how in WAYS:
            rounds = [
                asyncio.run(run(api_url, transport(), manga_id, how)) for _ in range(args.rounds)
            ]
            wall, requests, listed = min(rounds)
            results[how] = wall
            print(f"  {how:<15} {wall:6.3f} s  {requests:3d} requests  {listed} chapters")
        base = results["concurrent-500"]
        print(
            f"  ratio: sequential-500 / concurrent-500 = {results['sequential-500'] / base:.2f}x, "
            f"sequential-100 / concurrent-500 = {results['sequential-100'] / base:.2f}x"
        )
    finally:
        if child is not None:
            child.terminate()
            child.wait(timeout=10)


if __name__ == "__main__":
    main()
