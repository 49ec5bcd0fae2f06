"""Benchmark: a long chapter list through the Alethia dialect, next to the spec's face.

Why: the dialect translates the core's answers (chapter keys, dates, URLs),
which costs more than the spec face's serialisation; translations are kept
(``faces/alethia/rendered.py``) so a list asked for again costs about what
the spec face's cached answer does. Both faces run in the same process on
the same host, serving one in-process source with ``--chapters`` chapters;
the core's cache is on, as deployed. Printed: the mean time of one request
on each face, cold (the first request after the source's content changed,
which drops every cached answer and every translation) and warm (asked again), and the ratio of
the dialect to the spec face, the baseline measured in the same run.

Run: ``python bench/alethia_chapters.py [--chapters 2000] [--rounds 20]``
"""

import argparse
import asyncio
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from toshokan.models import (
    Chapter,
    Manga,
    SearchConfig,
    SearchRequest,
    SearchResponse,
    SortOption,
    SourceConfiguration,
)
from toshokan.sdk import NoSettings, RequestContext, Source
from toshokan.testing import ServedHost, serve

T0 = datetime(2024, 1, 1, tzinfo=UTC)
MANGA = "a-long-running-series"


class LongSeries(Source[NoSettings]):
    """One title with many chapters, from two groups in turn."""

    count = 2000
    #: Bumped with every reported change, so a cold list is also a new one.
    revision = 0

    def configuration(self) -> SourceConfiguration:
        return SourceConfiguration(
            name="Long series",
            slug=self.slug,
            icon="https://shelf.example/icon.png",
            url="https://shelf.example",
            languages=["en"],
            search=SearchConfig(sort=[SortOption.TITLE]),
        )

    async def search(self, request: SearchRequest, ctx: RequestContext) -> SearchResponse:
        return SearchResponse(results=[], page=request.page, more=False)

    async def manga(self, manga_slug: str, ctx: RequestContext) -> Manga:
        return Manga(slug=manga_slug, url=f"https://shelf.example/{manga_slug}")

    async def chapters(self, manga_slug: str, ctx: RequestContext) -> list[Chapter]:
        return [
            Chapter(
                slug=f"c{n:05d}",
                url=f"https://shelf.example/{manga_slug}/{n}",
                title=f"Chapter {n} (revision {self.revision})",
                number=n,
                date=T0 + timedelta(hours=n, microseconds=n),
                scanlator="beta" if n % 2 else "alpha",
            )
            for n in range(self.count)
        ]

    async def pages(self, manga_slug: str, chapter_slug: str, ctx: RequestContext) -> list[str]:
        return []


async def mean_ms(host: ServedHost, path: str, rounds: int, cold: bool) -> float:
    total = 0.0
    for _ in range(rounds):
        if cold:
            source = host.source("shelf")
            source.revision += 1
            source.content_changed()
        started = time.perf_counter()
        response = await host.client.get(path)
        total += time.perf_counter() - started
        assert response.status_code == 200, response.text
    return total / rounds * 1000


async def run(chapters: int, rounds: int) -> None:
    LongSeries.count = chapters
    with tempfile.TemporaryDirectory() as data:
        async with serve(
            LongSeries, slug="shelf", data_dir=Path(data), limits={"rate_limit": 0}
        ) as host:
            spec_path = f"/shelf/{MANGA}/chapters"
            dialect_path = f"/_/alethia{spec_path}"
            print(f"{chapters} chapters, {rounds} rounds each")
            for state, cold in (("cold", True), ("warm", False)):
                await host.client.get(spec_path)
                await host.client.get(dialect_path)
                spec = await mean_ms(host, spec_path, rounds, cold)
                dialect = await mean_ms(host, dialect_path, rounds, cold)
                print(
                    f"  {state}: spec face {spec:7.2f} ms   alethia {dialect:7.2f} ms   "
                    f"ratio {dialect / spec:5.2f}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chapters", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=20)
    options = parser.parse_args()
    asyncio.run(run(options.chapters, options.rounds))


if __name__ == "__main__":
    main()
