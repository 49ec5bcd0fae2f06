"""Progress writes and reads per second on SQLite and on PostgreSQL, and a library's first
scan with its claims in its index or in PostgreSQL, in the same run.

Why: ``[cluster] database`` moves readers and progress from SQLite in ``data_dir``
to a PostgreSQL every replica shares. Each write is durable before it returns
on both (SQLite ``synchronous=FULL``; PostgreSQL's commit, ``synchronous_commit``
on), so the figures say what sharing the store costs per page turn, and what
concurrency gives back: SQLite has one writer at a time, PostgreSQL commits
several transactions at once.

Rows, for each engine, through :class:`ProgressStore` as the faces call it:

- ``write``: ``record()`` one after another;
- ``write xN``: the same number of writes from N threads at once (the host runs
  the store in worker threads);
- ``read``: ``position()`` one after another.

The ratio is SQLite's rate over PostgreSQL's (above 1: PostgreSQL is slower).

Then a first scan of a generated library (``--series`` series of five one-page
chapters, read in the scan's thread), with slug claims and first-seen times kept
in the index (a lone host) and in PostgreSQL (``[cluster] database``): the second
pays a few round trips per series, which the ratio shows next to a scan that
reads almost nothing else.

Run (a PostgreSQL that takes the ``postgres`` user from this machine, as the tests use)::

    .venv/bin/python bench/database.py
    .venv/bin/python bench/database.py --operations 5000 --threads 16 \
        --server postgresql://postgres@127.0.0.1:5432
"""

import argparse
import secrets
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src")]

from toshokan.core.database import Database, SqliteDatabase  # noqa: E402
from toshokan.core.database.claims import DatabaseClaims  # noqa: E402
from toshokan.core.database.postgres import PostgresDatabase  # noqa: E402
from toshokan.core.progress import ChapterRef, Position, ProgressStore  # noqa: E402
from toshokan.sources.local import write_demo_library  # noqa: E402
from toshokan.sources.local.index import Index  # noqa: E402
from toshokan.sources.local.scanner import Scanner  # noqa: E402

READERS = 100


def rate(operations: int, run: Callable[[], None]) -> float:
    started = time.perf_counter()
    run()
    return operations / (time.perf_counter() - started)


def measure(database: Database, operations: int, threads: int) -> dict[str, float]:
    store = ProgressStore(database)
    refs = [ChapterRef("local", f"series-{n % 50}", f"ch-{n % 20}") for n in range(operations)]

    def write(n: int) -> None:
        position = Position(n % 30, 30, False, time.time(), "bench", "Bench")
        store.record(f"reader{n % READERS}", refs[n], position)

    def writes() -> None:
        for n in range(operations):
            write(n)

    def concurrent_writes() -> None:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(write, range(operations)))

    def reads() -> None:
        for n in range(operations):
            store.position(f"reader{n % READERS}", refs[n])

    return {
        "write": rate(operations, writes),
        f"write x{threads}": rate(operations, concurrent_writes),
        "read": rate(operations, reads),
    }


def first_scans(scratch: Path, postgres: PostgresDatabase, series: int) -> tuple[float, float]:
    """Seconds a first scan takes with the index's own claims, then with the host's."""
    root = scratch / "library"
    write_demo_library(root, series=series, chapters=5, pages=1)
    alone = Scanner(root, Index(scratch / "alone.sqlite3"), workers=1)
    shared = Scanner(
        root,
        Index(scratch / "shared.sqlite3"),
        workers=1,
        shared_claims=DatabaseClaims(postgres),
        source="local",
    )
    seconds = []
    for scanner in (alone, shared):
        started = time.perf_counter()
        scanner.scan()
        seconds.append(time.perf_counter() - started)
    return seconds[0], seconds[1]


def main(server: str, operations: int, threads: int, series: int) -> None:
    name = f"toshokan_bench_{secrets.token_hex(4)}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        with tempfile.TemporaryDirectory() as scratch:
            sqlite = SqliteDatabase(Path(scratch) / "readers.sqlite3")
            lite = measure(sqlite, operations, threads)
            sqlite.close()
            postgres = PostgresDatabase(f"{server}/{name}")
            pg = measure(postgres, operations, threads)
            scans = first_scans(Path(scratch), postgres, series)
            postgres.close()
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    print(f"{operations} operations each, {READERS} readers")
    print(f"{'':<10} {'SQLite':>10} {'PostgreSQL':>12} {'ratio':>8}")
    for row in lite:
        print(f"{row:<10} {lite[row]:>8.0f}/s {pg[row]:>10.0f}/s {lite[row] / pg[row]:>7.2f}x")
    alone, shared = scans
    print(f"first scan of {series} series x 5 chapters, claims in the index: {alone:.2f} s")
    print(f"{'':<36}claims in PostgreSQL: {shared:.2f} s ({shared / alone:.2f}x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--operations", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--series", type=int, default=300)
    options = parser.parse_args()
    main(options.server, options.operations, options.threads, options.series)
