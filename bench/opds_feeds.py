"""How long a series' chapters feed takes on the OPDS face, next to the core's own chapter list.

Why: a series feed lists a page of chapters (50), and for a library of archives
each entry carries an acquisition link (the chapter's file) and an OPDS-PSE
stream link whose ``pse:count`` needs the chapter's page count: questions the
core answers one chapter at a time. The face asks them for the whole page at
once and remembers the answers briefly, so a reader coming back to the series
after each chapter pays for them once. The floor is the host's JSON chapter
list of the same series (``/<source>/<manga>/chapters``: the same cached core
answer, no OPDS), measured in the same run, so the ratio is what the face adds.

Rows (in-process ASGI, no sockets, one client, sequential like a reader; the
core's chapter list is cached after the first request, as in real use):

- ``json chapter list``: the baseline;
- ``atom series feed, first view``: ``/_/opds/local/series/<manga>``, 50
  chapters shown, nothing remembered (each request comes with a new cookie, so
  the face's per-caller answers are new to it);
- ``atom series feed, again``: the same reader asking again;
- ``opds2 series feed``: the same two rows for ``/_/opds/v2/local/series/<manga>``;
- ``atom/opds2 list of 20 titles``: a page of all titles of a second library,
  whose Atom entries carry each title's summary and tags from the core's cache
  (the OPDS 2.0 list links each title by name).

Run::

    .venv/bin/python bench/opds_feeds.py
    .venv/bin/python bench/opds_feeds.py --rounds 100 --chapters 120 --pages 40
"""

import argparse
import asyncio
import itertools
import shutil
import sys
import tempfile
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from bench.timing import median_ms, seconds_each  # noqa: E402

from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library  # noqa: E402
from toshokan.testing import serve_host  # noqa: E402

#: Titles in the second library: one page of a list feed (the face's TITLES, not imported so
#: that this bench runs unchanged against earlier versions of the face).
TITLES = 20
#: A new reader for every "first view" request, across rows.
READERS = itertools.count()


async def feed_ms(client: httpx.AsyncClient, url: str, rounds: int, *, new_caller: bool) -> float:
    """The median time of ``rounds`` GETs of ``url`` (after one untimed warm-up)."""

    async def get() -> None:
        headers = {"Cookie": f"reader={next(READERS)}"} if new_caller else {}
        answer = await client.get(url, headers=headers)
        assert answer.status_code == 200, (url, answer.status_code, answer.text[:200])

    [times] = await seconds_each([get], rounds)
    return median_ms(times)


async def main(rounds: int, chapters: int, pages: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="toshokan-opds-feeds-"))
    try:
        library = work / "library"
        write_demo_library(library, series=1, chapters=chapters, pages=pages)
        shelf = work / "shelf"
        write_demo_library(shelf, series=TITLES, chapters=1, pages=1)
        sources = {
            "local": (LocalLibrary, LocalSettings(root=library, watch=False)),
            "shelf": (LocalLibrary, LocalSettings(root=shelf, watch=False)),
        }
        async with serve_host(sources, data_dir=work / "data", limits={"rate_limit": 0}) as host:
            client = host.client
            found = await client.post("/local/search", json={"page": 1, "sort": "title"})
            manga = found.json()["results"][0]["slug"]
            atom_feed = f"/_/opds/local/series/{manga}"
            json_feed = f"/_/opds/v2/local/series/{manga}"
            rows = [
                ("json chapter list", f"/local/{manga}/chapters", False),
                ("atom series feed, first view", atom_feed, True),
                ("atom series feed, again", atom_feed, False),
                ("opds2 series feed, first view", json_feed, True),
                ("opds2 series feed, again", json_feed, False),
                (f"atom list of {TITLES} titles", "/_/opds/shelf/all", False),
                (f"opds2 list of {TITLES} titles", "/_/opds/v2/shelf/all", False),
            ]
            figures = [
                (name, await feed_ms(client, url, rounds, new_caller=new))
                for name, url, new in rows
            ]
        baseline = figures[0][1]
        print(f"{chapters} chapters of {pages} pages, {rounds} rounds, median per request")
        print(f"{'row':30} {'ms':>8} {'ratio to baseline':>18}")
        for name, value in figures:
            print(f"{name:30} {value:8.2f} {value / baseline:18.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=50, help="timed requests per row")
    parser.add_argument("--chapters", type=int, default=50, help="chapters in the series")
    parser.add_argument("--pages", type=int, default=20, help="pages in each chapter")
    options = parser.parse_args()
    asyncio.run(main(options.rounds, options.chapters, options.pages))
