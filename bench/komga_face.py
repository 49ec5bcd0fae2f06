"""What the Komga face costs over the core: its listings and page lists next to the spec face's.

Why: Mihon browses a server through ``/api/v1/series`` pages and reads a
chapter after asking ``/api/v1/books/{id}/pages``; the same data comes from
the core's cached search and page list that the spec's interface answers
directly. Each pair below asks for the same data, in the same run, so the
ratio is what the face adds (telling the reader, Komga's shapes, ids, and on
the series page each series' chapters and the reader's places in them, counted).

Rows (in-process ASGI, no sockets, one client, sequential; a host with no
readers, so the face's reader check is the implicit reader's):

- ``spec search, 20 titles``: ``POST /local/search`` by title; the baseline of
- ``komga series page, 20``: ``GET /_/komga/api/v1/series?search=&size=20&sort=metadata.titleSort,asc``;
- ``spec chapter list``: ``GET /local/<manga>/chapters``; the baseline of
- ``komga books of a series``: ``GET /_/komga/api/v1/series/<id>/books?unpaged=true``;
- ``spec page list``: ``GET /local/<manga>/chapters/<chapter>``; the baseline of
- ``komga page list``: ``GET /_/komga/api/v1/books/<id>/pages``.

Run::

    .venv/bin/python bench/komga_face.py
    .venv/bin/python bench/komga_face.py --rounds 100 --series 60 --chapters 40 --pages 30
"""

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from toshokan.core.progress import ChapterRef  # noqa: E402
from toshokan.faces.komga.ids import book_id  # noqa: E402
from toshokan.faces.komga.ids import series_id as series_id_of  # noqa: E402
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library  # noqa: E402
from toshokan.testing import serve_host  # noqa: E402

KOMGA = "/_/komga/api/v1"


async def median_ms(
    client: httpx.AsyncClient, method: str, url: str, rounds: int, body: Any = None
) -> float:
    """The median time of ``rounds`` requests (after one untimed warm-up that fills the caches)."""
    first = await client.request(method, url, json=body)
    assert first.status_code == 200, (url, first.status_code, first.text[:200])
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        answer = await client.request(method, url, json=body)
        times.append(time.perf_counter() - started)
        assert answer.status_code == 200
    return statistics.median(times) * 1000


async def main(rounds: int, series: int, chapters: int, pages: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="toshokan-komga-face-"))
    try:
        library = work / "library"
        write_demo_library(library, series=series, chapters=chapters, pages=pages)
        sources = {"local": (LocalLibrary, LocalSettings(root=library, watch=False))}
        async with serve_host(sources, data_dir=work / "data", limits={"rate_limit": 0}) as host:
            client = host.client
            search = {"page": 1, "limit": 20, "sort": "title", "direction": "asc"}
            found = await client.post("/local/search", json=search)
            manga = found.json()["results"][0]["slug"]
            chapter = (await client.get(f"/local/{manga}/chapters")).json()[0]["slug"]
            listing = f"{KOMGA}/series?search=&page=0&size=20&sort=metadata.titleSort,asc"
            # The same work and chapter as the spec's rows.
            series_id = series_id_of("local", manga)
            book = book_id(ChapterRef("local", manga, chapter))
            pairs = [
                (
                    ("spec search, 20 titles", "POST", "/local/search", search),
                    ("komga series page, 20", "GET", listing, None),
                ),
                (
                    ("spec chapter list", "GET", f"/local/{manga}/chapters", None),
                    (
                        "komga books of a series",
                        "GET",
                        f"{KOMGA}/series/{series_id}/books?unpaged=true",
                        None,
                    ),
                ),
                (
                    ("spec page list", "GET", f"/local/{manga}/chapters/{chapter}", None),
                    ("komga page list", "GET", f"{KOMGA}/books/{book}/pages", None),
                ),
            ]
            figures = []
            for baseline, face in pairs:
                floor = await median_ms(client, *baseline[1:3], rounds, baseline[3])
                cost = await median_ms(client, *face[1:3], rounds, face[3])
                figures.append((baseline[0], floor, None))
                figures.append((face[0], cost, cost / floor))
        print(
            f"{series} series, {chapters} chapters of {pages} pages, {rounds} rounds, "
            "median per request"
        )
        print(f"{'row':28} {'ms':>8} {'ratio to the spec row above':>28}")
        for name, value, ratio in figures:
            shown = f"{ratio:28.2f}" if ratio is not None else f"{'':28}"
            print(f"{name:28} {value:8.2f} {shown}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=50, help="timed requests per row")
    parser.add_argument("--series", type=int, default=40, help="series in the library")
    parser.add_argument("--chapters", type=int, default=30, help="chapters in each series")
    parser.add_argument("--pages", type=int, default=20, help="pages in each chapter")
    options = parser.parse_args()
    asyncio.run(main(options.rounds, options.series, options.chapters, options.pages))
