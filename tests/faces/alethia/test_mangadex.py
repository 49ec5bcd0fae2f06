"""The app reads MangaDex (its fake upstream) through /_/alethia, decoding as it does."""

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.faces.alethia import app_decoder as decode
from tests.faces.alethia.reader import AppReader
from tests.sources.local.helpers import png
from tests.sources.mangadex.fake import API, AT_HOME, UPLOADS, FakeMangaDex
from toshokan.sources.mangadex import MangaDex
from toshokan.testing import ServedHost, serve_host

pytestmark = pytest.mark.anyio
PNG = png()


def at_home_images() -> Starlette:
    """MangaDex@Home as the app meets it: page files by URL alone, no header needed."""

    async def page(request: Request) -> Response:
        return Response(PNG, media_type="image/png")

    return Starlette(routes=[Route("/{quality}/{digest}/{name}", page)])


@pytest.fixture
def fake() -> FakeMangaDex:
    fake = FakeMangaDex()
    manga = fake.add_manga("frieren", "Frieren")
    fake.add_many_chapters(manga, 3)
    fake.add_chapter(manga, "3.5", title="Extra", pages=2)
    return fake


class Upstreams(httpx.AsyncBaseTransport):
    """The fake API, and the at-home image server at its own address, as on the internet."""

    def __init__(self, fake: FakeMangaDex):
        self.api = fake.transport()
        self.images = httpx.ASGITransport(app=at_home_images())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        at_home = request.url.host == httpx.URL(AT_HOME).host
        return await (self.images if at_home else self.api).handle_async_request(request)


@pytest.fixture
async def served(fake: FakeMangaDex, tmp_path: Path) -> AsyncIterator[ServedHost]:
    settings = {"api_url": API, "uploads_url": UPLOADS}
    sources = {"mangadex": (MangaDex, settings)}
    async with serve_host(sources, upstream=Upstreams(fake), data_dir=tmp_path) as host:
        yield host


@pytest.fixture
async def images(fake: FakeMangaDex) -> AsyncIterator[httpx.AsyncClient]:
    """The app's image loader, for links that leave the host."""
    async with httpx.AsyncClient(transport=Upstreams(fake)) as client:
        yield client


async def test_the_app_reads_a_mangadex_chapter(
    served: ServedHost, images: httpx.AsyncClient
) -> None:
    seen = await AppReader(served.client, images=images).read("mangadex")
    assert seen.source["referer"] == "https://mangadex.org/"
    assert seen.pages and all(image.status_code == 200 for image in seen.images)
    assert all(image.content == PNG for image in seen.images)


async def test_the_source_object_declares_only_known_words(served: ServedHost) -> None:
    source = await AppReader(served.client).source("mangadex")
    spec = (await served.client.get("/mangadex")).json()
    assert "latest" in spec["search"]["sort"]
    assert "demographic" in spec["search"]["filters"]
    assert set(source["search"]["sort"]) == set(spec["search"]["sort"]) & decode.SORTS
    assert set(source["search"]["filters"]) == set(spec["search"]["filters"]) & decode.FILTERS
    names = [p["name"] for p in source["presets"]]
    assert names == [p["name"] for p in spec["presets"]]  # latest translated, none dropped
    sorts = {p["name"]: p["request"]["sort"] for p in source["presets"]}
    assert sorts["Latest updates"] == "updatedAt"


async def test_chapters_decode_and_pages_ignore_the_manga_segment(
    served: ServedHost, fake: FakeMangaDex
) -> None:
    reader = AppReader(served.client)
    [manga] = fake.manga.values()
    chapters = await reader.get(f"/mangadex/{manga.id}/chapters")
    decode.chapters(chapters)
    spec = (await served.client.get(f"/mangadex/{manga.id}/chapters")).json()
    assert [c["number"] for c in chapters] == [c["number"] for c in spec]
    for mine, theirs in zip(chapters, spec, strict=True):
        assert mine["url"] == theirs["url"]
        assert mine["slug"] != theirs["slug"] and mine["slug"].endswith(theirs["slug"])
    extra = next(c for c in chapters if c["number"] == 3.5)
    for segment in ("1", "987654321", manga.id):
        assert len(await reader.get(f"/mangadex/{segment}/chapters/{extra['slug']}")) == 2


async def test_a_chapter_key_of_another_title_is_not_found(
    served: ServedHost, fake: FakeMangaDex
) -> None:
    other = fake.add_manga("other", "Other")
    [manga] = [m for m in fake.manga.values() if m.id != other.id]
    chapter = next(iter(fake.chapters.values()))
    forged = f"{len(other.id)}_{other.id}_{chapter.id}"
    response = await served.client.get(f"/_/alethia/mangadex/1/chapters/{forged}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "CHAPTER_NOT_FOUND"
    assert manga.id != other.id
