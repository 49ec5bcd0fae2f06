"""MangaDex@Home reports: every page the host's proxy fetched from a node is reported to the
report endpoint, as MangaDex's documentation asks; images from MangaDex's own servers are not."""

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.sources.mangadex.fake import API, AT_HOME, REPORT, UPLOADS, FakeMangaDex
from tests.sources.mangadex.image_servers import ImageServers
from tests.sources.mangadex.sample import two_series
from toshokan.core.answers import Caller
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, serve_host

pytestmark = pytest.mark.anyio
BASE = "http://testserver"


@pytest.fixture
def fake() -> FakeMangaDex:
    return two_series()


@pytest.fixture
def servers(fake: FakeMangaDex) -> ImageServers:
    return ImageServers(fake)


async def host_with(
    servers: ImageServers, tmp_path: Path, **settings: Any
) -> AsyncIterator[ServedHost]:
    spec = (MangaDex, Settings(api_url=API, uploads_url=UPLOADS, **settings))
    async with serve_host(
        {"mangadex": spec}, upstream=servers, data_dir=tmp_path, limits={"rate_limit": 0}
    ) as served:
        yield served


@pytest.fixture
async def host(servers: ImageServers, tmp_path: Path) -> AsyncIterator[ServedHost]:
    async for served in host_with(servers, tmp_path, report_url=REPORT):
        yield served


async def first_chapter_pages(host: ServedHost, fake: FakeMangaDex) -> list[str]:
    manga = next(m for m in fake.manga.values() if m.title["en"] == "Pirate Voyage")
    chapter = next(c for c in fake.chapters.values() if c.manga_id == manga.id)
    visit = await host.core.visit("mangadex", Caller({}, BASE))
    return (await visit.pages(manga.id, chapter.id)).value


async def read_through_the_proxy(host: ServedHost, url: str) -> int:
    link = host.core.images.signed_url(BASE, "mangadex", url)
    return (await host.client.get(link)).status_code


async def reports(fake: FakeMangaDex, count: int) -> list[dict[str, Any]]:
    for _ in range(100):
        if len(fake.reports) >= count:
            break
        await asyncio.sleep(0.02)
    return fake.reports


async def test_each_page_from_a_node_is_reported_with_what_happened(
    host: ServedHost, fake: FakeMangaDex, servers: ImageServers
) -> None:
    pages = await first_chapter_pages(host, fake)
    assert all(page.startswith(AT_HOME) for page in pages)
    servers.cached.add(pages[0].removeprefix(AT_HOME))
    servers.failing.add(pages[2].removeprefix(AT_HOME))
    statuses = [await read_through_the_proxy(host, page) for page in pages]
    assert statuses == [200, 200, 502]
    sent = await reports(fake, 3)
    assert [r["url"] for r in sent] == pages
    assert [(r["success"], r["cached"]) for r in sent] == [
        (True, True),
        (True, False),
        (False, False),
    ]
    assert [r["bytes"] for r in sent] == [len(servers.body), len(servers.body), 0]  # no image came
    assert all(isinstance(r["duration"], int) and r["duration"] >= 0 for r in sent)


async def test_covers_from_mangadex_own_servers_are_not_reported(
    host: ServedHost, fake: FakeMangaDex, servers: ImageServers
) -> None:
    manga = next(iter(fake.manga.values()))
    visit = await host.core.visit("mangadex", Caller({}, BASE))
    cover = (await visit.manga(manga.id)).value.covers[0]
    assert cover.startswith(UPLOADS)
    assert await read_through_the_proxy(host, cover) == 200
    # A page list may point at MangaDex's own CDN too: not reported, whatever it answered.
    await read_through_the_proxy(host, "https://uploads.mangadex.org/data/x/1.png")
    page = (await first_chapter_pages(host, fake))[0]
    assert await read_through_the_proxy(host, page) == 200
    assert [r["url"] for r in await reports(fake, 1)] == [page]
    await asyncio.sleep(0.1)
    assert len(fake.reports) == 1


async def test_an_empty_report_url_sends_no_reports(
    servers: ImageServers, fake: FakeMangaDex, tmp_path: Path
) -> None:
    async for host in host_with(servers, tmp_path, report_url=""):
        page = (await first_chapter_pages(host, fake))[0]
        assert await read_through_the_proxy(host, page) == 200
        await asyncio.sleep(0.2)
    assert fake.reports == []
