"""How long a reader waits for a first search and a first page through the ``opds`` adapter.

Why: an OPDS source adds a hop (reader -> toshokan -> catalogue) and, for books
without page streaming, a whole-book download before the first page. The
figure that matters is the first search and the first page of a cold host,
next to the floor: the same catalogue requests sent straight to the server
with httpx in the same run (the search feed; the page image, or the book
download for an archive), so the ratio is what the adapter costs.

Servers: a real calibre-server on loopback when Debian's ``calibre`` is
installed, a real Codex when one is (``TOSHOKAN_TEST_CODEX``), another
toshokan's own OPDS face (in process, a demo library), and the in-process
fakes of Komga (page streaming), Kavita (key in the URL), Codex (its
deviations) and an OPDS 2.0 catalogue (archive download).

Run::

    .venv/bin/python bench/opds_first_read.py
    .venv/bin/python bench/opds_first_read.py --rounds 5
"""

import argparse
import asyncio
import contextlib
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from asgi_lifespan import LifespanManager

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.sources.opds, the fakes and the calibre-server starter

from tests.sources.opds import fakes  # noqa: E402
from tests.sources.opds.calibre_server import available, calibre_server  # noqa: E402
from tests.sources.opds.codex_server import codex_executable, codex_server  # noqa: E402

from toshokan.sdk import throttle  # noqa: E402
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library  # noqa: E402
from toshokan.sources.opds import Opds, atom  # noqa: E402
from toshokan.testing import build_app, serve  # noqa: E402

Case = tuple[str, dict[str, Any], Any, str, list[str], Any]


async def through_toshokan(
    settings: dict[str, Any], upstream: Any, query: str, data_dir: Path
) -> tuple[float, float]:
    """Seconds for the first search, and for search-to-first-image of its first work."""
    async with serve(Opds, settings, slug="shelf", upstream=upstream, data_dir=data_dir) as host:
        client = host.client
        started = time.perf_counter()
        found = (
            await client.post(
                "/shelf/search", json={"page": 1, "sort": "relevance", "query": query}
            )
        ).json()
        searched = time.perf_counter()
        slug = found["results"][0]["slug"]
        chapters = (await client.get(f"/shelf/{slug}/chapters")).json()
        urls = (await client.get(f"/shelf/{slug}/chapters/{chapters[-1]['slug']}")).json()
        image = await client.get(urls[0])
        assert image.status_code == 200, image.text
        return searched - started, time.perf_counter() - searched


async def direct(urls: list[str], upstream: Any, auth: Any = None) -> float:
    """Seconds to GET ``urls`` in turn straight from the server (the floor)."""
    transport = httpx.ASGITransport(app=upstream) if upstream is not None else None
    async with httpx.AsyncClient(transport=transport, auth=auth) as client:
        started = time.perf_counter()
        for url in urls:
            (await client.get(url)).raise_for_status()
        return time.perf_counter() - started


async def face_floor(app: Any, query: str) -> list[str]:
    """The face's own URLs a reader walks to a first page: search, series, chapter, page."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://other.test") as client:
        urls = [f"http://other.test/_/opds/local/search?q={query}"]
        for _ in range(2):  # search -> series, series -> its first-listed chapter's last entry
            feed = atom.parse_feed((await client.get(urls[-1])).content, urls[-1])
            urls.append(next(e.feed for e in reversed(feed.entries) if e.feed is not None))
        chapter = atom.parse_feed((await client.get(urls[-1])).content, urls[-1])
        stream = next(b.stream for b in chapter.books if b.stream is not None)
        return [*urls, stream.template.replace("{pageNumber}", "0").replace("{maxWidth}", "2000")]


def cases(calibre_root: str | None, codex_root: str | None) -> list[Case]:
    komga, kavita, codex, v2 = fakes.Komga(), fakes.Kavita(), fakes.Codex(), fakes.KomgaV2()
    basic = (fakes.Komga.user, fakes.Komga.password)
    found: list[Case] = [
        ("komga (fake, PSE)", {"url": komga.root, "username": basic[0], "password": basic[1]},
         komga.app(), "harbour",
         ["http://komga.test/opds/v1.2/series?search=harbour", "http://komga.test/opds/v1.2/series/0A1",
          "http://komga.test/opds/v1.2/books/B1/pages/0?zero_based=true"], basic),
        ("kavita (fake, PSE)", {"url": f"{kavita.origin}/api/opds/{{api_key}}", "api_key": kavita.key},
         kavita.app(), "harbour",
         [f"{kavita.root}/series?query=harbour", f"{kavita.root}/series/0",
          f"{kavita.root}/image?seriesId=0&chapterId=B1&pageNumber=0"], None),
        ("codex (fake, deviations)", {"url": codex.root}, codex.app(), "harbour",
         ["http://codex.test/opds/v1.2/s/0/1?q=harbour", "http://codex.test/opds/v1.2/s/0A1/1",
          "http://codex.test/opds/v1.2/c/B1/0/page.jpg"], None),
        ("opds 2.0 (fake, CBZ)", {"url": v2.root}, v2.app(), "harbour",
         ["http://komga2.test/opds/v2/series?query=harbour", "http://komga2.test/opds/v2/series/0A1",
          "http://komga2.test/opds/v2/books/B1/file"], None),
    ]  # fmt: skip
    if calibre_root:
        base = calibre_root.removesuffix("/opds")
        found.append(
            ("calibre-server (real, CBZ)", {"url": calibre_root}, None, "Star Atlas",
             [f"{base}/opds/search/Star%20Atlas", f"{base}/get/CBZ/2/library"], None)
        )  # fmt: skip
    if codex_root:
        base = codex_root.removesuffix("/opds/v1.2/")
        found.append(
            ("codex (real, PSE)", {"url": codex_root}, None, "red",
             [f"{base}/opds/v1.2/s/0/1?q=red&topGroup=s", f"{base}/opds/v1.2/s/1/1?topGroup=s",
              f"{base}/opds/bin/c/1/0/page.jpg?bookmark=1"], None)
        )  # fmt: skip
    return found


async def run(rounds: int, folder: Path, calibre_root: str | None, codex_root: str | None) -> None:
    write_demo_library(folder / "other-library", series=3, chapters=2, pages=3)
    other = build_app(
        {"local": (LocalLibrary, LocalSettings(root=folder / "other-library", watch=False))},
        data_dir=folder / "other",
        host={"public_url": "http://other.test"},
    )
    async with LifespanManager(other) as manager:
        face: Case = (
            "toshokan OPDS face (PSE)", {"url": "http://other.test/_/opds"}, manager.app, "iron",
            await face_floor(manager.app, "iron"), None,
        )  # fmt: skip
        await measure(rounds, folder, [*cases(calibre_root, codex_root), face])


async def measure(rounds: int, folder: Path, servers: list[Case]) -> None:
    print(f"{'server':28} {'first search':>13} {'first page':>11} {'direct':>9} {'ratio':>7}")
    for name, settings, upstream, query, urls, auth in servers:
        searches, pages, floors = [], [], []
        for n in range(rounds):
            throttle.reset()  # budgets are process-wide; each cold host starts with a full one
            s, p = await through_toshokan(settings, upstream, query, folder / f"{name[:6]}-{n}")
            searches.append(s)
            pages.append(p)
            floors.append(await direct(urls, upstream, auth))
        search, page, floor = (statistics.median(v) * 1000 for v in (searches, pages, floors))
        print(
            f"{name:28} {search:10.1f} ms {page:8.1f} ms {floor:6.1f} ms {(search + page) / floor:6.1f}x"
        )


def main() -> None:
    logging.getLogger("toshokan").setLevel(logging.ERROR)  # the deviations' warnings are expected
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=3, help="cold hosts per server (median shown)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as servers:
        folder = Path(tmp)
        calibre_root = codex_root = None
        if available():
            calibre_root = servers.enter_context(calibre_server(folder / "calibre"))
        else:
            print("calibre-server not installed (apt-get install calibre): skipped")
        codex = codex_executable()
        if codex is not None:
            codex_root = servers.enter_context(codex_server(folder / "codex", codex))
        else:
            print("Codex not installed (TOSHOKAN_TEST_CODEX, .venv-codex): skipped")
        asyncio.run(run(args.rounds, folder, calibre_root, codex_root))


if __name__ == "__main__":
    main()
