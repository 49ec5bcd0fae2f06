"""Progress writes per second through KOReader's ``PUT /_/kosync/syncs/progress``, next to the
bare store's, in the same run.

Why: every page turn a reader syncs is a durable write (SQLite, ``synchronous=FULL``:
on disk before the answer). The floor is :class:`ProgressStore.record` called
directly; the face adds the edge, Gin-style checks, finding which reader it is
(a remembered argon2 check and one indexed read), resolving the document to a
chapter and two thread hops. The ratio says what all that costs on top.

1,000 readers are created first, hashed at argon2's lowest cost so that setting
them up takes seconds (the host's default cost is paid once per reader and then
remembered, as here); each signs in once before the clock starts, so the rows are
the steady state of a reader turning pages, not their first request.

Rows (in-process ASGI, no sockets):

- ``bare store``: ``record()`` in one thread, one reader after another;
- ``kosync PUT``: the same number of writes, ``--concurrency`` requests at once,
  readers in turn, half on chapters of the library (a page of a known file),
  half on books the host does not hold (kept under KOReader's id).

Run::

    .venv/bin/python bench/progress.py               # about half a minute
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

from argon2 import PasswordHasher

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from tests.kosync.koreader import ACCEPT, koreader_partial_md5  # noqa: E402

from toshokan.core.progress import ChapterRef, Position  # noqa: E402
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library  # noqa: E402
from toshokan.testing import serve_host  # noqa: E402

READERS = 1000
CHEAP = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)


def headers(name: str) -> dict[str, str]:
    key = hashlib.md5(f"password-{name}".encode()).hexdigest()
    return {"accept": ACCEPT, "x-auth-user": name, "x-auth-key": key}


async def main(writes: int, concurrency: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        library = Path(scratch) / "library"
        write_demo_library(library, series=4, chapters=4, pages=20)
        digests = [koreader_partial_md5(p.read_bytes()) for p in sorted(library.rglob("*.cbz"))]
        digests += [f"{n:032x}" for n in range(len(digests))]  # books the host does not hold
        spec = (LocalLibrary, LocalSettings(root=library, watch=False))
        async with serve_host(
            {"local": spec}, data_dir=Path(scratch) / "data", limits={"rate_limit": 0}
        ) as host:
            accounts = host.core.readers.readers
            accounts.hasher = CHEAP
            names = [f"reader{n:04d}" for n in range(READERS)]
            started = time.perf_counter()
            for name in names:
                await asyncio.to_thread(accounts.add, name, f"password-{name}")
            print(f"{READERS} readers added in {time.perf_counter() - started:.1f} s")
            for name in names:
                answer = await host.client.get("/_/kosync/users/auth", headers=headers(name))
                assert answer.status_code == 200, answer.text

            store = host.core.progress
            ref = ChapterRef("local", "bench", "ch-1")
            started = time.perf_counter()
            for n in range(writes):
                store.record(names[n % READERS], ref, Position(n % 20, 20, False, time.time()))
            bare = writes / (time.perf_counter() - started)

            queue = iter(range(writes))

            async def device() -> None:
                for n in queue:
                    name = names[n % READERS]
                    body = {
                        "document": digests[n % len(digests)],
                        "progress": str(n % 20 + 1),
                        "percentage": round((n % 20 + 1) / 20, 4),
                        "device": "Kobo",
                        "device_id": name,
                    }
                    answer = await host.client.put(
                        "/_/kosync/syncs/progress",
                        content=json.dumps(body),
                        headers={**headers(name), "content-type": "application/json"},
                    )
                    assert answer.status_code == 200, answer.text

            started = time.perf_counter()
            await asyncio.gather(*(device() for _ in range(concurrency)))
            face = writes / (time.perf_counter() - started)

    print(f"{'bare store':<12} {bare:9.0f} writes/s")
    print(f"{'kosync PUT':<12} {face:9.0f} writes/s  ({concurrency} at once)")
    print(f"ratio        {bare / face:9.2f}x  (bare store / kosync PUT)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=16)
    options = parser.parse_args()
    asyncio.run(main(options.writes, options.concurrency))
