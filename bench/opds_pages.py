"""Pages per second an OPDS-PSE reader gets, next to the source's own page route.

Why: a PSE reader fetches a chapter page by page through ``/_/opds/.../pages/{n}``,
which goes through the core (page list, memoised per caller) and the image
pipeline (fetch, maybe convert or resize, caches). The floor is the local
library's own page route (``/_/local/pages/...``), which streams the same bytes
straight out of the archive, measured in the same run on the same host. The
ratio says what the face and the pipeline cost on top.

Rows (in-process ASGI, no sockets, one client, sequential like a reader):

- ``source route``: the baseline, the library's own page URLs;
- ``opds pass-through``: the same JPEG pages through PSE, no resize;
- ``opds maxWidth=200 cold``: every page resized (the demo pages are 360 px wide),
  the disk cache emptied first;
- ``opds maxWidth=200 warm``: the same again, answered from the disk cache;
- ``mangadex webp cold/warm``: MangaDex-like WebP pages from a fake upstream,
  converted to JPEG (the at-home server answers instantly, so this is the
  conversion's cost, not the network's);
- with ``--upstream-format jpeg``, ``mangadex jpeg cold/warm``: the at-home
  server sends JPEG, which PSE readers get as it is, so these rows are what
  the path through the face, the core and the pipeline costs for a page of
  an upstream chapter (its page list once, then each image from memory). A
  cold chapter's first page is bound by MangaDex's rate ceilings (a few API
  requests a second), not by the host, so it is not a row of its own.

``--best-of K`` measures each row K times and keeps the best (cold rows on
an emptied disk cache, or another chapter never read, each time): on a shared machine the
best of several is the figure least disturbed by the neighbours.

Run::

    .venv/bin/python bench/opds_pages.py              # about half a minute
    .venv/bin/python bench/opds_pages.py --upstream-format jpeg --best-of 5
"""

import argparse
import asyncio
import io
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from tests.sources.mangadex.fake import API, AT_HOME, UPLOADS, FakeMangaDex  # noqa: E402

from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library  # noqa: E402
from toshokan.sources.mangadex import MangaDex, Settings  # noqa: E402
from toshokan.testing import serve_host  # noqa: E402


class PageServers(httpx.AsyncBaseTransport):
    """The fake MangaDex API, and at-home servers answering one page (WebP or JPEG)."""

    def __init__(self, fake: FakeMangaDex, body: bytes, media_type: str):
        self.api = fake.transport()
        self.body = body
        self.media_type = media_type
        self.hosts = {httpx.URL(AT_HOME).host, httpx.URL(UPLOADS).host}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host in self.hosts:
            return httpx.Response(200, content=self.body, headers={"Content-Type": self.media_type})
        return await self.api.handle_async_request(request)


def upstream_page(kind: str) -> bytes:
    image = Image.new("RGB", (1100, 1600), (240, 235, 220))
    for y in range(0, 1600, 40):
        image.paste((30, 30, 30), (100, y, 1000, y + 8))
    out = io.BytesIO()
    image.save(out, kind.upper(), quality=80)
    return out.getvalue()


@dataclass(frozen=True)
class Rate:
    """Pages a second, and the process's CPU time a page (every thread's), in milliseconds:
    on a shared machine the CPU a page costs moves less with the neighbours than the rate."""

    per_second: float
    cpu_ms: float


async def rate(fetch: Callable[[str], Awaitable[int]], urls: list[str], rounds: int) -> Rate:
    started, cpu = time.perf_counter(), time.process_time()
    total = 0
    for _ in range(rounds):
        for url in urls:
            total += await fetch(url)
    elapsed, spent = time.perf_counter() - started, time.process_time() - cpu
    return Rate(total / elapsed, spent * 1000 / total)


async def best(times: int, measure: Callable[[int], Awaitable[Rate]]) -> Rate:
    """The best of ``times`` measurements (``measure(n)`` for n from 0): the highest rate and,
    apart, the least CPU a page."""
    found = [await measure(n) for n in range(times)]
    return Rate(max(r.per_second for r in found), min(r.cpu_ms for r in found))


def pse(template: str, count: int, width: str = "") -> list[str]:
    return [
        template.replace("{pageNumber}", str(n)).replace("{maxWidth}", width) for n in range(count)
    ]


async def main(rounds: int, pages: int, upstream_format: str, best_of: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="toshokan-opds-bench-"))
    try:
        library = work / "library"
        write_demo_library(library, series=1, chapters=1, pages=pages)
        fake = FakeMangaDex()
        manga = fake.add_manga("bench", "Bench Voyage")
        # One chapter per cold measurement: each is read once, its page list and images unknown.
        chapters = [fake.add_chapter(manga, str(n + 1), pages=pages) for n in range(best_of)]
        sources = {
            "local": (LocalLibrary, LocalSettings(root=library, watch=False)),
            "mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS)),
        }
        async with serve_host(
            sources,
            upstream=PageServers(fake, upstream_page(upstream_format), f"image/{upstream_format}"),
            data_dir=work / "data",
            limits={"rate_limit": 0, "image_rate_limit": 0},
        ) as host:
            client = host.client

            async def fetch(url: str) -> int:
                answer = await client.get(url)
                assert answer.status_code == 200, (url, answer.status_code, answer.text[:200])
                return 1

            found = (await client.post("/local/search", json={"page": 1, "sort": "title"})).json()[
                "results"
            ][0]["slug"]
            local_chapter = (await client.get(f"/local/{found}/chapters")).json()[0]["slug"]
            direct = (await client.get(f"/local/{found}/chapters/{local_chapter}")).json()
            local_template = f"/_/opds/local/series/{found}/{local_chapter}/pages/{{pageNumber}}?maxWidth={{maxWidth}}"
            dex_templates = [
                f"/_/opds/mangadex/series/{manga.id}/{c.id}/pages/{{pageNumber}}?maxWidth={{maxWidth}}"
                for c in chapters
            ]
            cache = work / "data" / "image-cache"

            async def warm(urls: list[str]) -> Rate:
                return await best(best_of, lambda _: rate(fetch, urls, rounds))

            async def cold(urls: list[str]) -> Rate:
                def emptied(_: int) -> Awaitable[Rate]:
                    shutil.rmtree(cache, ignore_errors=True)
                    return rate(fetch, urls, 1)

                return await best(best_of, emptied)

            rows: list[tuple[str, Rate]] = []
            rows.append(("source route (baseline)", await warm(direct)))
            rows.append(("opds pass-through", await warm(pse(local_template, pages))))
            resized = pse(local_template, pages, "200")
            rows.append(("opds maxWidth=200 cold", await cold(resized)))
            rows.append(("opds maxWidth=200 warm", await warm(resized)))
            shutil.rmtree(cache, ignore_errors=True)
            unread = best(best_of, lambda n: rate(fetch, pse(dex_templates[n], pages), 1))
            rows.append((f"mangadex {upstream_format} cold", await unread))
            rows.append(
                (f"mangadex {upstream_format} warm", await warm(pse(dex_templates[0], pages)))
            )

        baseline = rows[0][1]
        print(f"best of {best_of}")
        print(f"{'row':28} {'pages/s':>10} {'ratio to baseline':>18} {'cpu ms/page':>12}")
        for name, value in rows:
            ratio = value.per_second / baseline.per_second
            print(f"{name:28} {value.per_second:10.1f} {ratio:18.2f} {value.cpu_ms:12.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="passes over each chapter")
    parser.add_argument("--pages", type=int, default=20, help="pages in the chapter")
    parser.add_argument(
        "--upstream-format",
        choices=["webp", "jpeg"],
        default="webp",
        help="what MangaDex's at-home server sends: webp (converted) or jpeg (passed through)",
    )
    parser.add_argument("--best-of", type=int, default=1, help="measurements kept the best of")
    options = parser.parse_args()
    asyncio.run(
        main(
            options.rounds,
            options.pages,
            options.upstream_format,
            options.best_of,
        )
    )
