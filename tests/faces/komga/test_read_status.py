"""Mihon's Unread / In progress / Read filters and the books counts of a listing, from the
reader's places in each series' chapters, decoded as the extension and Komga's DTOs read them."""

import pytest

from tests.faces.komga.clients import komga_dtos as komga
from tests.faces.komga.clients.mihon_extension import SearchFilters, Sort
from tests.sources.mangadex.fake import FakeMangaDex
from toshokan.testing import ServedHost

from .helpers import mihon

pytestmark = pytest.mark.anyio

BY_TITLE = Sort(1, True)


async def book_ids(host: ServedHost, series_id: str) -> list[str]:
    answer = await host.client.get(f"/_/komga/api/v1/series/{series_id}/books?unpaged=true")
    return [
        book.id for book in komga.Page[komga.BookDto].model_validate_json(answer.content).content
    ]


async def listed(host: ServedHost, query: str = "") -> list[komga.SeriesDto]:
    answer = await host.client.get(f"/_/komga/api/v1/series?search=&sort=name,asc{query}")
    assert answer.status_code == 200, answer.text
    return komga.Page[komga.SeriesDto].model_validate_json(answer.content).content


async def read_one_finish_another(host: ServedHost) -> tuple[str, str, str]:
    """The titles of three series: one with a chapter started, one read, one untouched."""
    started, finished, untouched = await listed(host)
    first, _ = await book_ids(host, started.id)
    progress = f"/_/komga/api/v1/books/{first}/read-progress"
    assert (await host.client.patch(progress, json={"page": 2})).status_code == 204
    for book in await book_ids(host, finished.id):
        marked = await host.client.patch(
            f"/_/komga/api/v1/books/{book}/read-progress", json={"completed": True}
        )
        assert marked.status_code == 204
    return started.name, finished.name, untouched.name


async def test_the_read_filters_pick_series_by_the_readers_places(local_host: ServedHost) -> None:
    started, finished, untouched = await read_one_finish_another(local_host)
    _, source = mihon(local_host)

    async def titles(filters: SearchFilters) -> list[str]:
        return [manga.title for manga in (await source.search(1, "", filters)).mangas]

    # Mihon's "Unread" asks for UNREAD and IN_PROGRESS together, as Komga's web app does.
    assert await titles(SearchFilters(unread=True, sort=BY_TITLE)) == [started, untouched]
    assert await titles(SearchFilters(in_progress=True, sort=BY_TITLE)) == [started]
    assert await titles(SearchFilters(read=True, sort=BY_TITLE)) == [finished]
    assert await titles(SearchFilters(sort=BY_TITLE)) == [started, finished, untouched]


async def test_a_listing_counts_the_books_and_what_was_read(local_host: ServedHost) -> None:
    started, finished, untouched = await read_one_finish_another(local_host)
    every = await listed(local_host)
    books = {series.name: len(await book_ids(local_host, series.id)) for series in every}
    counts = {
        series.name: (
            series.booksCount,
            series.booksReadCount,
            series.booksInProgressCount,
            series.booksUnreadCount,
        )
        for series in every
    }
    assert counts == {
        started: (books[started], 0, 1, books[started] - 1),
        finished: (books[finished], books[finished], 0, 0),
        untouched: (books[untouched], 0, 0, books[untouched]),
    }
    assert all(count > 0 for count in books.values())


async def test_a_read_status_komga_does_not_have_is_400(local_host: ServedHost) -> None:
    answer = await local_host.client.get("/_/komga/api/v1/series?read_status=SKIMMED")
    assert answer.status_code == 400 and answer.json()["status"] == 400


async def test_aidokus_read_status_condition_filters_too(local_host: ServedHost) -> None:
    _, finished, _ = await read_one_finish_another(local_host)
    body = {"condition": {"allOf": [{"readStatus": {"operator": "is", "value": "READ"}}]}}
    answer = await local_host.client.post("/_/komga/api/v1/series/list", json=body)
    found = komga.Page[komga.SeriesDto].model_validate_json(answer.content).content
    assert [series.name for series in found] == [finished]


async def test_an_upstream_source_filters_the_page_it_answered(
    mangadex_fake: FakeMangaDex, mangadex_host: ServedHost
) -> None:
    """MangaDex's chapters are one request per series: a listing counts them only when a read
    filter needs them, and then for the series of the page the source answered."""
    mangadex_fake.add_many_chapters(
        mangadex_fake.add_manga("sea", "Sea Song"), 2, mangadex_fake.add_group("Tide Scans")
    )
    pirates, sea = sorted(await listed(mangadex_host), key=lambda series: series.name)
    assert (pirates.name, sea.name) == ("Pirate Voyage", "Sea Song")
    assert pirates.booksCount == 0  # unfiltered: no chapter list asked for
    books = await book_ids(mangadex_host, pirates.id)
    marked = await mangadex_host.client.patch(
        f"/_/komga/api/v1/books/{books[0]}/read-progress", json={"completed": True}
    )
    assert marked.status_code == 204
    in_progress = await listed(mangadex_host, "&read_status=IN_PROGRESS")
    assert [(s.name, s.booksCount, s.booksReadCount) for s in in_progress] == [
        ("Pirate Voyage", len(books), 1)
    ]
    unread = await listed(mangadex_host, "&read_status=UNREAD")
    assert [series.name for series in unread] == ["Sea Song"]
