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
- ``webp -> jpeg cold/warm``: MangaDex-like WebP pages from a fake upstream,
  converted to JPEG (the at-home server answers instantly, so this is the
  conversion's cost, not the network's).

Run::

    .venv/bin/python bench/opds_pages.py              # about half a minute
    .venv/bin/python bench/opds_pages.py --rounds 5
"""

import argparse
import asyncio
import io
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from tests.sources.mangadex.fake import API, AT_HOME, UPLOADS, FakeMangaDex  # noqa: E402

from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library  # noqa: E402
from toshokan.sources.mangadex import MangaDex, Settings  # noqa: E402
from toshokan.testing import serve_host  # noqa: E402


class WebpServers(httpx.AsyncBaseTransport):
    """The fake MangaDex API, and at-home servers answering one WebP page."""

    def __init__(self, fake: FakeMangaDex, body: bytes):
        self.api = fake.transport()
        self.body = body
        self.hosts = {httpx.URL(AT_HOME).host, httpx.URL(UPLOADS).host}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host in self.hosts:
            return httpx.Response(200, content=self.body, headers={"Content-Type": "image/webp"})
        return await self.api.handle_async_request(request)


def webp_page() -> bytes:
    image = Image.new("RGB", (1100, 1600), (240, 235, 220))
    for y in range(0, 1600, 40):
        image.paste((30, 30, 30), (100, y, 1000, y + 8))
    out = io.BytesIO()
    image.save(out, "WEBP", quality=80)
    return out.getvalue()


async def rate(fetch: Callable[[str], Awaitable[int]], urls: list[str], rounds: int) -> float:
    started = time.perf_counter()
    total = 0
    for _ in range(rounds):
        for url in urls:
            total += await fetch(url)
    elapsed = time.perf_counter() - started
    return rounds * len(urls) / elapsed


def pse(template: str, count: int, width: str = "") -> list[str]:
    return [
        template.replace("{pageNumber}", str(n)).replace("{maxWidth}", width) for n in range(count)
    ]


async def main(rounds: int, pages: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="toshokan-opds-bench-"))
    try:
        library = work / "library"
        write_demo_library(library, series=1, chapters=1, pages=pages)
        fake = FakeMangaDex()
        manga = fake.add_manga("bench", "Bench Voyage")
        chapter = fake.add_chapter(manga, "1", pages=pages)
        sources = {
            "local": (LocalLibrary, LocalSettings(root=library, watch=False)),
            "mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS)),
        }
        async with serve_host(
            sources,
            upstream=WebpServers(fake, webp_page()),
            data_dir=work / "data",
            limits={"rate_limit": 0},
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
            dex_template = f"/_/opds/mangadex/series/{manga.id}/{chapter.id}/pages/{{pageNumber}}?maxWidth={{maxWidth}}"
            cache = work / "data" / "image-cache"

            rows: list[tuple[str, float]] = []
            rows.append(("source route (baseline)", await rate(fetch, direct, rounds)))
            rows.append(
                ("opds pass-through", await rate(fetch, pse(local_template, pages), rounds))
            )
            shutil.rmtree(cache, ignore_errors=True)
            resized = pse(local_template, pages, "200")
            rows.append(("opds maxWidth=200 cold", await rate(fetch, resized, 1)))
            rows.append(("opds maxWidth=200 warm", await rate(fetch, resized, rounds)))
            shutil.rmtree(cache, ignore_errors=True)
            converted = pse(dex_template, pages)
            rows.append(("webp -> jpeg cold", await rate(fetch, converted, 1)))
            rows.append(("webp -> jpeg warm", await rate(fetch, converted, rounds)))

        baseline = rows[0][1]
        print(f"{'row':28} {'pages/s':>10} {'ratio to baseline':>18}")
        for name, value in rows:
            print(f"{name:28} {value:10.1f} {value / baseline:18.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="passes over each chapter")
    parser.add_argument("--pages", type=int, default=20, help="pages in the chapter")
    options = parser.parse_args()
    asyncio.run(main(options.rounds, options.pages))
