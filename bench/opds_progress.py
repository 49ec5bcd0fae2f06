"""What a reader's progress costs the OPDS series feed: p99 with a place in most chapters, and without.

Why: with readers, every series feed shows ``pse:lastRead`` and
``pse:lastReadDate`` on each stream link, asked of the progress store once per
feed (one indexed query for the reader's positions in that manga), and the
feed now also tells the reader from their credentials (argon2 once, then a
remembered check and two indexed queries). The floor is the same feed of the
same series on a host without readers, served in the same run.

Rows (in-process ASGI, no sockets, sequential like one reader; each feed warmed once):

- ``no readers``: ``/_/opds/local/series/<manga>`` on an open host;
- ``reader, progress``: the same feed signed in with Basic, the reader having a
  place in 90 % of the chapters (and 1,000 other readers with places too).

Run::

    .venv/bin/python bench/opds_progress.py
    .venv/bin/python bench/opds_progress.py --rounds 400 --chapters 50
"""

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from bench.timing import median_ms, p99_ms, seconds_each  # noqa: E402

from toshokan.core.progress import ChapterRef, Position  # noqa: E402
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library  # noqa: E402
from toshokan.testing import ServedHost, serve_host  # noqa: E402

OTHER_READERS = 1000


async def series_of(host: ServedHost) -> tuple[str, list[str]]:
    found = await host.client.post("/local/search", json={"page": 1, "sort": "title"})
    manga = found.json()["results"][0]["slug"]
    chapters = await host.client.get(f"/local/{manga}/chapters")
    return manga, [c["slug"] for c in chapters.json()]


async def main(rounds: int, chapters: int, pages: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="toshokan-opds-progress-"))
    try:
        library = work / "library"
        write_demo_library(library, series=1, chapters=chapters, pages=pages)
        sources = {"local": (LocalLibrary, LocalSettings(root=library, watch=False))}
        limits = {"rate_limit": 0}
        async with (
            serve_host(sources, data_dir=work / "open", limits=limits) as open_host,
            serve_host(sources, data_dir=work / "readers", limits=limits) as host,
        ):
            manga, slugs = await series_of(host)
            await asyncio.to_thread(host.core.readers.readers.add, "ayumi", "correct horse")
            store, now = host.core.progress, time.time()
            for number, slug in enumerate(slugs[: len(slugs) * 9 // 10]):
                ref = ChapterRef("local", manga, slug)
                store.record("ayumi", ref, Position(number % pages, pages, False, now))
            for other in range(OTHER_READERS):
                ref = ChapterRef("local", manga, slugs[other % len(slugs)])
                store.record(f"reader{other}", ref, Position(1, pages, False, now))
            url = f"/_/opds/local/series/{manga}"
            shown = await host.client.get(url, auth=("ayumi", "correct horse"))
            assert b"lastRead=" in shown.content

            async def open_feed() -> None:
                answer = await open_host.client.get(url)
                assert answer.status_code == 200, answer.text[:200]

            async def reader_feed() -> None:
                answer = await host.client.get(url, auth=("ayumi", "correct horse"))
                assert answer.status_code == 200, answer.text[:200]

            bare, with_progress = [
                (median_ms(times), p99_ms(times))
                for times in await seconds_each([open_feed, reader_feed], rounds)
            ]
        print(f"series feed of {chapters} chapters, {rounds} rounds, ms per request")
        print(f"{'row':20} {'median':>8} {'p99':>8}")
        print(f"{'no readers':20} {bare[0]:8.2f} {bare[1]:8.2f}")
        print(f"{'reader, progress':20} {with_progress[0]:8.2f} {with_progress[1]:8.2f}")
        ratios = (with_progress[0] / bare[0], with_progress[1] / bare[1])
        print(f"{'ratio':20} {ratios[0]:8.2f} {ratios[1]:8.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200, help="timed requests per row")
    parser.add_argument("--chapters", type=int, default=50, help="chapters in the series")
    parser.add_argument("--pages", type=int, default=20, help="pages in each chapter")
    options = parser.parse_args()
    asyncio.run(main(options.rounds, options.chapters, options.pages))
