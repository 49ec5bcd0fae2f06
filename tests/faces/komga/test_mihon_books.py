"""Mihon's "Books" browse type (Type = Books in the filter sheet), over every source, each
answer checked against Komga's own OpenAPI document; and the counts Komga's pages carry."""

import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.faces.komga.clients import komga_openapi
from tests.faces.komga.clients.mihon_extension import TYPE_BOOKS, SearchFilters, Sort
from tests.faces.komga.clients.mihon_extension_models import SManga
from tests.sources.mangadex.fake import API, UPLOADS
from tests.sources.mangadex.image_servers import ImageServers
from tests.sources.mangadex.sample import two_series
from toshokan.core.progress import ChapterRef
from toshokan.faces.komga.ids import book_of
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, serve_host

from .helpers import SECRET, SERVER, mihon

pytestmark = pytest.mark.anyio

ALPHABETICALLY, DATE_ADDED = Sort(1, True), Sort(2, False)


@pytest.fixture
async def two_sources(tmp_path: Path) -> AsyncIterator[ServedHost]:
    """Three series of two chapters in the library, and MangaDex's two series."""
    root = tmp_path / "library"
    write_demo_library(root, series=3, chapters=2, pages=3)
    async with serve_host(
        {
            "local": (LocalLibrary, LocalSettings(root=root, watch=False)),
            "mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS)),
        },
        upstream=ImageServers(two_series()),
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0},
    ) as served:
        # The whole library indexed before anything is compared with it (a first scan slower
        # than the host's start-up wait, on a busy machine, would still be under way).
        await served.source("local").rescan()
        yield served


async def every_chapter(host: ServedHost, source: str) -> set[ChapterRef]:
    """Every chapter of every series of a source, through the spec's own interface."""
    found: set[ChapterRef] = set()
    page, more = 1, True
    while more:
        answer = (
            await host.client.post(f"/{source}/search", json={"page": page, "sort": "title"})
        ).json()
        for result in answer["results"]:
            chapters = (await host.client.get(f"/{source}/{result['slug']}/chapters")).json()
            found |= {ChapterRef(source, result["slug"], c["slug"]) for c in chapters}
        page, more = page + 1, answer["more"]
    return found


def ref_of(manga: SManga) -> ChapterRef:
    return book_of(manga.url.rsplit("/", 1)[1])


async def test_browsing_books_lists_every_chapter_of_every_source(two_sources: ServedHost) -> None:
    _, source = mihon(two_sources)
    books: list[SManga] = []
    for number in range(1, 20):
        page = await source.search(number, "", SearchFilters(type=TYPE_BOOKS, sort=ALPHABETICALLY))
        books += page.mangas
        if not page.has_next_page:
            break
    expected = await every_chapter(two_sources, "local") | await every_chapter(
        two_sources, "mangadex"
    )
    assert {ref.source for ref in expected} == {"local", "mangadex"}
    assert [ref_of(book) for book in books] == list(dict.fromkeys(map(ref_of, books)))
    assert {ref_of(book) for book in books} == expected
    # The library's in title order, each series' chapters one after another.
    local = [ref_of(book).manga for book in books if ref_of(book).source == "local"]
    runs = [manga for manga, _ in itertools.groupby(local)]
    assert runs == sorted(set(local))

    # Each book opens as Mihon opens it: details, its one chapter, its pages.
    for book in books[:3] + books[-2:]:
        details = await source.manga_details(book.url)
        assert details.title == book.title
        (chapter,) = await source.chapter_list(book.url)
        pages = await source.page_list(chapter.url)
        assert pages
        assert (await source.page_image(pages[0].image_url)).status_code == 200
    assert komga_openapi.assert_answers_as_documented(source.client.exchanges) >= 10


async def test_books_by_search_and_read_status(two_sources: ServedHost) -> None:
    _, source = mihon(two_sources)
    iron = await source.search(1, "Iron Garden", SearchFilters(type=TYPE_BOOKS, sort=Sort(0, True)))
    assert {ref_of(book).manga for book in iron.mangas} == {"iron-garden"}
    assert {ref_of(book) for book in iron.mangas} == {
        ref for ref in await every_chapter(two_sources, "local") if ref.manga == "iron-garden"
    }
    first = iron.mangas[0]
    read = await source.client.request(
        "PATCH",
        f"{first.url}/read-progress",
        content=b'{"completed": true}',
        headers={"Content-Type": "application/json"},
        check=True,
    )
    assert read.status_code == 204
    by_status: dict[str, Any] = {}
    for name, filters in (
        ("read", SearchFilters(type=TYPE_BOOKS, read=True, sort=ALPHABETICALLY)),
        ("unread", SearchFilters(type=TYPE_BOOKS, unread=True, sort=ALPHABETICALLY)),
    ):
        by_status[name] = {ref_of(b) for b in (await source.search(1, "", filters)).mangas}
    assert by_status["read"] == {ref_of(first)}
    everything = await every_chapter(two_sources, "local") | await every_chapter(
        two_sources, "mangadex"
    )
    assert by_status["unread"] == everything - {ref_of(first)}
    latest = await source.search(1, "", SearchFilters(type=TYPE_BOOKS, sort=DATE_ADDED))
    assert latest.mangas
    assert komga_openapi.assert_answers_as_documented(source.client.exchanges) >= 4


async def test_a_listings_count_is_the_same_on_every_page(tmp_path: Path) -> None:
    """A library's count is true on every page of the series, books and collection listings
    (it was what the pages so far implied: 3 on the first page, 7 on the last)."""
    root = tmp_path / "library"
    write_demo_library(root, series=7, chapters=2, pages=1)
    async with serve_host(
        {"local": (LocalLibrary, LocalSettings(root=root, watch=False))},
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0},
    ) as host:
        await host.source("local").rescan()
        _, source = mihon(host)
        books = len(await every_chapter(host, "local"))
        for path, total in (("series", 7), ("books", books)):
            pages = []
            for number in range(0, 10):
                answer = await source.client.request(
                    "GET", f"{SERVER}/api/v1/{path}?page={number}&size=2", check=True
                )
                page = komga_json(answer.content)
                pages.append(page)
                if page["last"]:
                    break
            assert [p["totalElements"] for p in pages] == [total] * len(pages), path
            assert [p["totalPages"] for p in pages] == [len(pages)] * len(pages), path
            assert sum(p["numberOfElements"] for p in pages) == total
        assert komga_openapi.assert_answers_as_documented(source.client.exchanges) >= 8


def komga_json(content: bytes) -> Any:
    return json.loads(content)
