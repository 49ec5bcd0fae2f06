"""What KOReader's ``HEAD`` before each catalogue ``GET`` costs the host, next to the ``GET``.

Why: KOReader asks ``HEAD`` before every feed to check the copy it keeps by
``Last-Modified``; the face answers it from the feed's remembered validators
without building the feed (``faces/opds/freshness.py``), and a conditional
``GET`` the client's copy matches with ``304`` the same way. The baseline is
the ``GET`` of the same feed, the reader asking again (the core's answers
cached, as in real use), measured in the same run with the rows taking turns.

Rows (in-process ASGI, no sockets, one client, sequential):

- ``atom series feed, GET``: ``/_/opds/local/series/<manga>`` (50 chapters shown);
- ``atom series feed, HEAD``;
- ``atom series feed, 304``: ``GET`` with ``If-None-Match``;
- ``opds2 series feed, GET`` / ``HEAD``: the same for ``/_/opds/v2/...``.

Run::

    .venv/bin/python bench/opds_head.py
    .venv/bin/python bench/opds_head.py --rounds 200 --chapters 120
"""

import argparse
import asyncio
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from bench.timing import median_ms, seconds_each  # noqa: E402

from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library  # noqa: E402
from toshokan.testing import serve_host  # noqa: E402


def asking(
    client: httpx.AsyncClient, method: str, url: str, status: int, **headers: str
) -> Callable[[], Awaitable[None]]:
    async def call() -> None:
        answer = await client.request(method, url, headers=headers)
        assert answer.status_code == status, (method, url, answer.status_code)

    return call


async def main(rounds: int, chapters: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="toshokan-opds-head-"))
    try:
        library = work / "library"
        write_demo_library(library, series=1, chapters=chapters, pages=3)
        sources = {"local": (LocalLibrary, LocalSettings(root=library, watch=False))}
        async with serve_host(sources, data_dir=work / "data", limits={"rate_limit": 0}) as host:
            client = host.client
            titles = (await client.get("/_/opds/v2/local/all")).json()
            v2 = titles["navigation"][0]["href"]
            atom = v2.replace("/_/opds/v2/", "/_/opds/")
            tag = (await client.get(atom)).headers["etag"]
            rows = [
                ("atom series feed, GET", asking(client, "GET", atom, 200)),
                ("atom series feed, HEAD", asking(client, "HEAD", atom, 200)),
                (
                    "atom series feed, 304",
                    asking(client, "GET", atom, 304, **{"If-None-Match": tag}),
                ),
                ("opds2 series feed, GET", asking(client, "GET", v2, 200)),
                ("opds2 series feed, HEAD", asking(client, "HEAD", v2, 200)),
            ]
            times = await seconds_each([call for _, call in rows], rounds)
        medians = [median_ms(kept) for kept in times]
        print(f"1 series of {chapters} chapters, {rounds} rounds, median per request")
        print(f"{'row':26} {'ms':>8} {'ratio to its GET':>17}")
        baseline = medians[0]
        for (name, _), value in zip(rows, medians, strict=True):
            if name.endswith("GET"):
                baseline = value
            print(f"{name:26} {value:8.3f} {value / baseline:17.3f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=100, help="timed requests per row")
    parser.add_argument("--chapters", type=int, default=60, help="chapters in the series")
    options = parser.parse_args()
    asyncio.run(main(options.rounds, options.chapters))
