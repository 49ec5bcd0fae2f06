"""Progress writes per second through KOReader's ``PUT /_/kosync/syncs/progress`` and through
the OPDS stream, with 1,000 readers, next to the bare store's, in the same run; and what a
recorded page adds to a page answer.

Why: every page turn a reader syncs or streams is a durable write (SQLite,
``synchronous=FULL``: on disk before the answer). The floor is
:class:`ProgressStore.record` called directly. KOReader's face adds the edge,
Gin-style checks, finding which reader it is (a remembered argon2 check and one
indexed read), resolving the document to a chapter and two thread hops. A PSE page
request adds the reader's Basic sign-in and the page itself (the image pipeline's
cached JPEG), the inferred write running beside the render. The ratios say what
all that costs on top.

1,000 readers are created first, hashed at argon2's lowest cost so that setting
them up takes seconds (the host's default cost is paid once per reader and then
remembered, as here); each signs in once on each face before the clock starts, so
the rows are the steady state of a reader turning pages, not their first request.

Rows (in-process ASGI, no sockets):

- ``bare store``: ``record()`` in one thread, one reader after another;
- ``kosync PUT``: the same number of writes, ``--concurrency`` requests at once,
  readers in turn, half on chapters of the library (a page of a known file),
  half on books the host does not hold (kept under KOReader's id);
- ``opds stream``: the same number of PSE page requests
  (``/_/opds/local/series/<manga>/<chapter>/pages/<n>``), ``--concurrency`` at
  once, readers in turn (Basic), each request a page further than the reader's
  last, so each one moves the reader's position (a stored write);
- ``page answer``: one stream page at a time, median and p99, with the write
  (each request a page further, readers in turn) and, taking turns with it, the
  same requests with the store's write replaced by nothing: the difference is
  what recording progress adds to a page answer.

Run::

    .venv/bin/python bench/progress.py               # about a minute
    .venv/bin/python bench/progress.py --writes 5000 --concurrency 32
"""

import argparse
import asyncio
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from bench.timing import median_ms, p99_ms, per_second, seconds_each  # noqa: E402
from tests.faces.kosync.koreader import ACCEPT, koreader_partial_md5  # noqa: E402

from toshokan.core.progress import ChapterRef, Position  # noqa: E402
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library  # noqa: E402
from toshokan.testing import ServedHost, serve_host  # noqa: E402

READERS = 1000
PAGES = 20
CHEAP = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
#: Page requests one chapter takes while each moves its reader forward (page 0 is read first).
MOST_PAGE_REQUESTS = READERS * (PAGES - 1)


def password(name: str) -> str:
    return f"password-{name}"


def kosync_headers(name: str) -> dict[str, str]:
    key = hashlib.md5(password(name).encode()).hexdigest()
    return {"accept": ACCEPT, "x-auth-user": name, "x-auth-key": key}


def page_url(manga: str, chapter: str, number: int) -> str:
    return f"/_/opds/local/series/{manga}/{chapter}/pages/{number}"


class Stream:
    """PSE page requests of one chapter, each a page further for its reader than their last."""

    def __init__(self, host: ServedHost, names: list[str], manga: str, chapter: str):
        self.host, self.names, self.manga, self.chapter = host, names, manga, chapter

    async def __call__(self, number: int) -> None:
        # Reader n % READERS, page 1 + n // READERS: page after page for every reader in turn.
        name = self.names[number % READERS]
        url = page_url(self.manga, self.chapter, 1 + number // READERS)
        answer = await self.host.client.get(url, auth=(name, password(name)))
        assert answer.status_code == 200, answer.text


async def chapters_of(host: ServedHost) -> tuple[str, list[str]]:
    """The series with the most chapters, and its chapter slugs."""
    found = await host.client.post("/local/search", json={"page": 1, "sort": "title"})
    series = []
    for manga in found.json()["results"]:
        chapters = await host.client.get(f"/local/{manga['slug']}/chapters")
        series.append((manga["slug"], [c["slug"] for c in chapters.json()]))
    return max(series, key=lambda named: len(named[1]))


async def main(writes: int, concurrency: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        library = Path(scratch) / "library"
        write_demo_library(library, series=4, chapters=4, pages=PAGES)
        digests = [koreader_partial_md5(p.read_bytes()) for p in sorted(library.rglob("*.cbz"))]
        digests += [f"{n:032x}" for n in range(len(digests))]  # books the host does not hold
        spec = (LocalLibrary, LocalSettings(root=library, watch=False))
        async with serve_host(
            {"local": spec},
            data_dir=Path(scratch) / "data",
            limits={"rate_limit": 0, "image_rate_limit": 0},
        ) as host:
            manga, chapters = await chapters_of(host)
            accounts = host.core.readers.readers
            accounts.hasher = CHEAP
            names = [f"reader{n:04d}" for n in range(READERS)]
            started = time.perf_counter()
            for name in names:
                await asyncio.to_thread(accounts.add, name, password(name))
            print(f"{READERS} readers added in {time.perf_counter() - started:.1f} s")
            for name in names:
                answer = await host.client.get("/_/kosync/users/auth", headers=kosync_headers(name))
                assert answer.status_code == 200, answer.text
                # Signs in on the OPDS face too (a page 0, where the timed pages start after).
                for chapter in chapters[:3]:
                    answer = await host.client.get(
                        page_url(manga, chapter, 0), auth=(name, password(name))
                    )
                    assert answer.status_code == 200, answer.text
            # Every page rendered once, by a reader of its own, so the rows time cached pages.
            await asyncio.to_thread(accounts.add, "warm-up", password("warm-up"))
            for chapter in chapters[:3]:
                for number in range(PAGES):
                    answer = await host.client.get(
                        page_url(manga, chapter, number), auth=("warm-up", password("warm-up"))
                    )
                    assert answer.status_code == 200, answer.text

            store = host.core.progress
            ref = ChapterRef("local", "bench", "ch-1")

            async def bare_write(n: int) -> None:
                store.record(
                    names[n % READERS], ref, Position(n % PAGES, PAGES, False, time.time())
                )

            async def kosync_put(n: int) -> None:
                name = names[n % READERS]
                body = {
                    "document": digests[n % len(digests)],
                    "progress": str(n % PAGES + 1),
                    "percentage": round((n % PAGES + 1) / PAGES, 4),
                    "device": "Kobo",
                    "device_id": name,
                }
                answer = await host.client.put(
                    "/_/kosync/syncs/progress",
                    content=json.dumps(body),
                    headers={**kosync_headers(name), "content-type": "application/json"},
                )
                assert answer.status_code == 200, answer.text

            bare = await per_second(bare_write, writes)
            kosync = await per_second(kosync_put, writes, concurrency)
            stream = await per_second(Stream(host, names, manga, chapters[0]), writes, concurrency)
            last = writes - 1  # the last request's reader has its page stored: each one was a write
            moved = store.position(names[last % READERS], ChapterRef("local", manga, chapters[0]))
            assert moved is not None and moved.page == 1 + last // READERS, moved

            # Page answers one at a time, with the write and with it replaced by nothing.
            recorded = Stream(host, names, manga, chapters[1])
            unrecorded = Stream(host, names, manga, chapters[2])
            real_record, recording = store.arecord, [True]

            async def maybe_record(*args: Any, **kwargs: Any) -> bool:
                return await real_record(*args, **kwargs) if recording[0] else False

            store.arecord = maybe_record  # type: ignore[method-assign]
            numbers = iter(range(MOST_PAGE_REQUESTS))

            async def with_write() -> None:
                await recorded(next(numbers))

            unrecorded_numbers = iter(range(MOST_PAGE_REQUESTS))

            async def without_write() -> None:
                recording[0] = False
                try:
                    await unrecorded(next(unrecorded_numbers))
                finally:
                    recording[0] = True

            written, skipped = await seconds_each([with_write, without_write], rounds)

    print(f"{'row':<28} {'writes/s':>9}")
    print(f"{'bare store':<28} {bare:9.0f}")
    print(f"{'kosync PUT':<28} {kosync:9.0f}  ({concurrency} at once)")
    print(f"{'opds stream page':<28} {stream:9.0f}  ({concurrency} at once)")
    print(f"ratio bare / kosync PUT       {bare / kosync:9.2f}x")
    print(f"ratio bare / opds stream      {bare / stream:9.2f}x")
    print(f"page answer, {rounds} rounds, ms  {'median':>8} {'p99':>8}")
    print(f"{'  no progress write':<28} {median_ms(skipped):8.2f} {p99_ms(skipped):8.2f}")
    print(f"{'  progress recorded':<28} {median_ms(written):8.2f} {p99_ms(written):8.2f}")
    print(
        f"{'  added by the write':<28} {median_ms(written) - median_ms(skipped):8.2f} "
        f"{p99_ms(written) - p99_ms(skipped):8.2f}"
        f"  (ratio of medians {median_ms(written) / median_ms(skipped):.2f})"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=2000, help="writes in each writes/s row")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=300, help="page answers in each timed row")
    options = parser.parse_args()
    if max(options.writes, options.rounds + 1) > MOST_PAGE_REQUESTS:  # +1: the warm-up request
        parser.error(f"--writes and --rounds + 1 are at most {MOST_PAGE_REQUESTS}")
    asyncio.run(main(options.writes, options.concurrency, options.rounds))
