"""Aidoku's Komga source and tracker: Basic on every request, searches as condition bodies."""

from typing import cast

import pytest

from tests.faces.komga.clients.aidoku_source import AidokuKomgaSource, condition
from tests.faces.komga.clients.okhttp_session import AsyncHttpClient, aidoku_client
from toshokan.testing import ServedHost

from .helpers import SERVER, add_reader

pytestmark = pytest.mark.anyio


def aidoku(host: ServedHost, name: str, password: str) -> AidokuKomgaSource:
    client = aidoku_client(cast(AsyncHttpClient, host.client), name, password)
    return AidokuKomgaSource(client, SERVER)


async def test_an_aidoku_session_reads_and_tracks(local_host: ServedHost) -> None:
    await add_reader(local_host, "mika", "hunter22")
    source = aidoku(local_host, "mika", "hunter22")
    assert await source.login("mika")
    assert not await aidoku(local_host, "mika", "wrong").login("mika")
    sheet = await source.filters()
    assert [library.id for library in sheet["libraries"]] == ["local"]
    found = await source.search(1, conditions=[condition("libraryId", "is", "local")])
    assert found.totalPages == 1 and len(found.content) == 3
    titles = [series.metadata.title for series in found.content]
    assert titles == sorted(titles)  # metadata.titleSort, ascending
    wanted = found.content[1]
    searched = await source.search(1, query=wanted.metadata.title)
    assert [series.id for series in searched.content] == [wanted.id]
    series = await source.series(wanted.id)
    chapters = await source.chapters(series.id)
    numbers = [book.metadata.numberSort for book in chapters]
    assert numbers == sorted(numbers, reverse=True) and len(chapters) == series.booksCount
    first = chapters[-1]
    pages = await source.pages(first.id)
    assert len(pages) == first.media.pagesCount
    assert (await source.page_image(pages[0])).status_code == 200
    # Reading to the end marks the book read; the tracker counts it.
    assert (await source.book_progress(first.id, 0, True)).status_code == 204
    state = await source.tracker_state(series.id)
    assert state.booksReadCount == 1
    assert state.lastReadContinuousNumberSort == first.metadata.numberSort
    assert (
        await source.tracker_update(series.id, chapters[0].metadata.numberSort)
    ).status_code == 204
    state = await source.tracker_state(series.id)
    assert state.lastReadContinuousNumberSort == state.maxNumberSort
    assert (await source.book_progress(first.id, 0, False)).status_code == 204
    progress = await source.series_read_progress(series.id)
    assert first.id not in progress and len(progress) == len(chapters) - 1


async def test_aidoku_on_an_open_host_signs_in_by_any_name(local_host: ServedHost) -> None:
    assert await aidoku(local_host, "anyone", "anything").login("anyone")


async def test_aidoku_filters_mangadex_by_genre(mangadex_host: ServedHost) -> None:
    source = aidoku(mangadex_host, "reader", "secret")
    sheet = await source.filters()
    assert "Action" in sheet["genres"] and "en" in sheet["languages"]
    tagged = await source.search(1, conditions=[{"anyOf": [condition("genre", "is", "Action")]}])
    assert [series.metadata.title for series in tagged.content] == ["Pirate Voyage"]
    chapters = await source.chapters(tagged.content[0].id)
    assert [book.metadata.numberSort for book in chapters] == [3.0, 2.0, 1.0]
    assert {author.name for book in chapters for author in book.metadata.authors} == {
        "Straw Hat Scans"
    }


@pytest.mark.parametrize(
    "body",
    [
        b"[]",
        b'{"condition": {"allOf": 3}}',
        b'{"condition": {"genre": {"operator": "is", "value": 7}}}',
        b'{"fullTextSearch": 5}',
        b'{"condition": {"anyOf": ['
        + b",".join([b'{"tag": {"operator": "is", "value": "t"}}'] * 101)
        + b"]}}",
    ],
)
async def test_a_search_body_out_of_bounds_is_400(local_host: ServedHost, body: bytes) -> None:
    answer = await local_host.client.post("/_/komga/api/v1/series/list", content=body)
    assert answer.status_code == 400 and answer.json()["status"] == 400
