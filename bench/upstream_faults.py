"""Benchmark: how long the host takes to answer each upstream fault, against its deadline.

Every fault of the upstream audit (``tests/sources/mangadex/faults.py``: absurd retry
hints, encoding lies, redirect loops, deep or ill-shaped JSON, HTML error
pages, silence, a byte a second, resets, truncated bodies) is scripted on the
fake MangaDex for the first upstream request of each content endpoint, and
the whole host (``toshokan.testing.serve``) answers one request. Per fault
and endpoint it prints the status and code answered, the seconds taken and
their ratio to ``[server] upstream_timeout``; a healthy request of each
endpoint, timed in the same run, is the baseline. Also timed: 30 concurrent
searches behind a 429 with ``Retry-After: 3600``, and a feed claiming 10,000
chapters at one a page (requests sent and seconds).

Run: ``python bench/upstream_faults.py [--deadline 3]``
"""

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.sources.mangadex, the stand-in for api.mangadex.org

from tests.sources.mangadex.fake import API, UPLOADS, FakeMangaDex  # noqa: E402
from tests.sources.mangadex.faults import COLLECTION, ENDPOINTS, FAULTS, FIRST_CALL, Fault, ask  # noqa: E402

from toshokan.sdk import throttle  # noqa: E402
from toshokan.sources.mangadex import MangaDex  # noqa: E402
from toshokan.testing import ServedHost, serve  # noqa: E402

OPTIONS = {"api_url": API, "uploads_url": UPLOADS, "requests_per_second": 20}


@asynccontextmanager
async def hosted(fake: FakeMangaDex, deadline: float) -> AsyncIterator[ServedHost]:
    """The whole host serving the fake as source ``mangadex`` under ``deadline``."""
    with tempfile.TemporaryDirectory() as data_dir:
        async with serve(
            MangaDex,
            OPTIONS,
            slug="mangadex",
            upstream=fake.transport(),
            data_dir=Path(data_dir),
            server={"upstream_timeout": deadline},
        ) as host:
            yield host


async def one(fault: Fault | None, endpoint: str, deadline: float) -> tuple[int, str, float, int]:
    """(status, code, seconds, upstream requests) for one request under ``fault`` (None: healthy)."""
    throttle.reset()
    fake = FakeMangaDex()
    manga = fake.add_manga("m", "M")
    chapter = fake.add_chapter(manga, "1")
    if fault is not None:
        fake.script(FIRST_CALL[endpoint], times=100, **fault.recipe(endpoint))
    async with hosted(fake, deadline) as host:
        started = time.perf_counter()
        answer = await ask(host, endpoint, manga.id, chapter.id)
        took = time.perf_counter() - started
    code = answer.json()["error"]["code"] if answer.status_code >= 400 else "-"
    return answer.status_code, code, took, len(fake.requests)


async def long_hint(deadline: float) -> tuple[float, set[int], int]:
    throttle.reset()
    fake = FakeMangaDex()
    fake.script(FIRST_CALL["search"], status=429, headers={"Retry-After": "3600"})
    async with hosted(fake, deadline) as host:
        started = time.perf_counter()
        answers = await asyncio.gather(
            *(
                host.client.post("/mangadex/search", json={"page": p, "sort": "latest"})
                for p in range(1, 31)
            )
        )
        took = time.perf_counter() - started
    return took, {a.status_code for a in answers}, len(fake.requests)


async def claimed_feed(deadline: float) -> tuple[float, int, int]:
    throttle.reset()
    fake = FakeMangaDex()
    manga = fake.add_manga("m", "M")
    chapter = fake.add_chapter(manga, "1")
    fake.script(
        r"/feed$",
        status=200,
        times=100_000,
        raw=COLLECTION
        + b'"data":[{"id":"'
        + chapter.id.encode()
        + b'","type":"chapter","attributes":{"chapter":"1"},"relationships":[]}],"total":10000}',
    )
    async with hosted(fake, deadline) as host:
        started = time.perf_counter()
        answer = await host.client.get(f"/mangadex/{manga.id}/chapters")
        took = time.perf_counter() - started
    return took, answer.status_code, len(fake.calls(r"/feed$"))


async def main(deadline: float) -> None:
    print(f"Upstream faults through the host, upstream_timeout = {deadline:g} s")
    baseline = {}
    for endpoint in ENDPOINTS:
        status, _, took, sent = await one(None, endpoint, deadline)
        baseline[endpoint] = took
        print(f"  {'healthy (baseline)':32} {endpoint:9} {status} {'-':17} {took:7.3f} s")
    worst = 0.0
    for fault in FAULTS:
        for endpoint in fault.endpoints:
            status, code, took, sent = await one(fault, endpoint, deadline)
            worst = max(worst, took / deadline)
            print(
                f"  {fault.name:32} {endpoint:9} {status} {code:17} {took:7.3f} s"
                f"  {took / deadline:5.2f}x deadline  {took / baseline[endpoint]:8.1f}x baseline"
                f"  {sent} upstream requests"
            )
    took, statuses, sent = await long_hint(deadline)
    print(
        f"  30 searches behind Retry-After: 3600: {took:.3f} s, statuses {sorted(statuses)},"
        f" {sent} upstream request(s)"
    )
    took, status, sent = await claimed_feed(deadline)
    print(f"  feed claiming 10,000 one-item pages: {status} in {took:.3f} s, {sent} feed requests")
    print(f"  slowest fault answer: {worst:.2f}x the deadline")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deadline", type=float, default=3.0)
    asyncio.run(main(parser.parse_args().deadline))
