"""What a reader follows, in the Komga apps: the collection *Following* (Mihon's collection
filter), the read list *New chapters* (Mihon's Type = Read lists), and Komga's "what is new"
listings (Komelia's home shelves, Paperback's discover sections), after the fake MangaDex
publishes a chapter and a check runs. Every answer is decoded as the app decodes it, and
checked against Komga's own OpenAPI document."""

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import cast

import pytest

from tests.faces.komga.clients import komga_dtos as komga
from tests.faces.komga.clients import komga_openapi
from tests.faces.komga.clients.mihon_extension import TYPE_READLISTS, SearchFilters
from tests.faces.komga.clients.okhttp_session import AsyncHttpClient
from tests.faces.komga.clients.paperback_source import PaperbackKomgaSource, paperback_client
from tests.sources.mangadex.fake import API, T0, UPLOADS, FakeMangaDex
from tests.sources.mangadex.image_servers import ImageServers
from tests.sources.mangadex.sample import two_series
from toshokan.faces.komga.ids import book_of, series_id
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, serve_host

from .helpers import SECRET, SERVER, mihon

pytestmark = pytest.mark.anyio

V1 = "/_/komga/api/v1"
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def fake() -> FakeMangaDex:
    return two_series()


@pytest.fixture
async def host(fake: FakeMangaDex, tmp_path: Path) -> AsyncIterator[ServedHost]:
    """The fake MangaDex, its rounds of checks a second apart, no readers (the implicit one)."""
    servers = ImageServers(fake)
    async with serve_host(
        {"mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS))},
        upstream=servers,
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0},
        follows={"round": 1},
    ) as served:
        yield served


async def until(condition: Callable[[], Awaitable[bool]], seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not await condition():
        if time.monotonic() > deadline:
            raise AssertionError("not within the time")
        await asyncio.sleep(0.1)


async def checked(host: ServedHost, manga: str) -> bool:
    answer = await host.client.get(f"/_/follows/series/mangadex/{manga}")
    return bool(answer.json()["state"] == "ok")


async def check_now(host: ServedHost) -> None:
    batch = (await host.client.post("/_/follows/checks", json={})).json()["batch"]

    async def finished() -> bool:
        status = (await host.client.get(f"/_/follows/checks/{batch}")).json()
        return status["finished"] is not None

    await until(finished)


async def latest_books(host: ServedHost) -> list[komga.BookDto]:
    """Komelia's "Recently added books" shelf."""
    answer = await host.client.get(f"{V1}/books/latest?page=0&size=20")
    assert answer.status_code == 200, answer.text
    return komga.Page[komga.BookDto].model_validate_json(answer.content).content


async def test_a_new_chapter_of_a_followed_series_in_every_komga_listing(
    host: ServedHost, fake: FakeMangaDex
) -> None:
    manga = next(m for m in fake.manga.values() if m.title["en"] == "Pirate Voyage")
    _, source = mihon(host)
    paperback = PaperbackKomgaSource(
        paperback_client(cast(AsyncHttpClient, host.client), "mika", "hunter22"), SERVER
    )
    # Following nothing: no collection of follows, and the home page is the sources' newest.
    presets = [c.name for c in (await source.filter_lists()).collections]
    assert presets and "Following" not in presets
    assert await paperback.recently("updated") == ["Pirate Voyage"]

    assert (await host.client.put(f"/_/follows/series/mangadex/{manga.id}")).status_code == 201
    await until(lambda: checked(host, manga.id))  # the first check: what exists is not new
    # Mihon's Collection filter: the series followed.
    following, *others = (await source.filter_lists()).collections
    assert [c.name for c in others] == presets
    assert (following.name, following.seriesIds) == ("Following", [series_id("mangadex", manga.id)])
    listed = await source.search(1, "", SearchFilters(collection=following.id))
    assert [m.title for m in listed.mangas] == ["Pirate Voyage"]
    assert await paperback.recently("new") == ["Pirate Voyage"]
    assert await paperback.recently("updated") == []
    assert await latest_books(host) == []
    # Every chapter there is, read (in Mihon): nothing on deck.
    chapters = await source.chapter_list(listed.mangas[0].url)
    for chapter in chapters:
        await source.client.request(
            "PATCH",
            f"{chapter.url}/read-progress",
            content=b'{"completed": true}',
            headers=JSON,
            check=True,
        )
    assert await paperback.on_deck() == []

    await asyncio.sleep(1.1)  # a series is checked on demand once a round at most
    landfall = fake.add_chapter(manga, "4", title="Landfall", publish_at=T0 + timedelta(days=30))
    await check_now(host)

    # Komelia's "Recently added books": the chapter found, with its series.
    (latest,) = await latest_books(host)
    assert book_of(latest.id).chapter == landfall.id
    assert (latest.seriesTitle, latest.metadata.title, latest.number) == (
        "Pirate Voyage",
        "Ch. 4 - Landfall",
        4,
    )
    assert latest.readProgress is None
    # Paperback's "Recently Updated" and "On Deck".
    assert await paperback.recently("updated") == ["Pirate Voyage"]
    assert [(title, shown) for title, shown, _ in await paperback.on_deck()] == [
        ("Pirate Voyage", following.seriesIds[0])
    ]
    # Mihon, Type = Read lists: "New chapters" is a manga whose one chapter is the new one,
    # and it reads to its last page.
    lists = await source.search(1, "", SearchFilters(type=TYPE_READLISTS))
    (news,) = [m for m in lists.mangas if m.title == "New chapters"]
    (new_one,) = await source.chapter_list(news.url)
    assert book_of(new_one.url.rsplit("/", 1)[1]).chapter == landfall.id
    pages = await source.page_list(new_one.url)
    assert pages and (await source.page_image(pages[-1].image_url)).status_code == 200
    # The series' own chapters in Mihon list it at once (what was cached of them is dropped).
    assert len(await source.chapter_list(listed.mangas[0].url)) == len(chapters) + 1

    # Read in Mihon: not new any more, still the latest found.
    await source.client.request(
        "PATCH",
        f"{new_one.url}/read-progress",
        content=b'{"completed": true}',
        headers=JSON,
        check=True,
    )
    assert await source.chapter_list(news.url) == []
    assert await paperback.on_deck() == []
    (latest,) = await latest_books(host)
    assert latest.readProgress is not None and latest.readProgress.completed
    assert komga_openapi.assert_answers_as_documented(source.client.exchanges) >= 6
