"""``books/ondeck`` (Aidoku's and Komelia's home page): the next unread book of each series the
reader started and left between books, the latest read first, decoded as Komga's DTOs."""

import pytest

from tests.faces.komga.clients import komga_dtos as komga
from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio

API = "/_/komga/api/v1"


async def books_of(host: ServedHost, series_id: str) -> list[komga.BookDto]:
    answer = await host.client.get(f"{API}/series/{series_id}/books?unpaged=true")
    return komga.Page[komga.BookDto].model_validate_json(answer.content).content


async def read(host: ServedHost, book: komga.BookDto, body: dict[str, object]) -> None:
    marked = await host.client.patch(f"{API}/books/{book.id}/read-progress", json=body)
    assert marked.status_code == 204, marked.text


async def on_deck(host: ServedHost, query: str = "") -> komga.Page[komga.BookDto]:
    answer = await host.client.get(f"{API}/books/ondeck{query}")
    assert answer.status_code == 200, answer.text
    return komga.Page[komga.BookDto].model_validate_json(answer.content)


async def test_the_next_book_of_each_series_left_between_books(local_host: ServedHost) -> None:
    listing = await local_host.client.get(f"{API}/series?search=&sort=name,asc")
    first, second, third = komga.Page[komga.SeriesDto].model_validate_json(listing.content).content
    assert (await on_deck(local_host)).content == []

    one, two, three = [await books_of(local_host, s.id) for s in (first, second, third)]
    await read(local_host, one[0], {"completed": True})  # left after its first book
    for book in two:  # every book read: nothing next
        await read(local_host, book, {"completed": True})
    await read(local_host, three[0], {"completed": True})  # left after its first, lately
    deck = await on_deck(local_host)
    assert [(book.seriesId, book.id, book.number) for book in deck.content] == [
        (third.id, three[1].id, 2),
        (first.id, one[1].id, 2),
    ]
    assert deck.content[0].readProgress is None and deck.content[0].media.pagesCount > 0
    assert (deck.totalElements, deck.last) == (2, True)

    paged = await on_deck(local_host, "?page=1&size=1")
    assert [book.id for book in paged.content] == [one[1].id]
    assert (paged.number, paged.totalElements, paged.totalPages) == (1, 2, 2)

    # A book in progress: the series is to keep reading, no longer on deck.
    await read(local_host, three[1], {"page": 2})
    assert [book.id for book in (await on_deck(local_host)).content] == [one[1].id]
    # Only the libraries asked for.
    assert (await on_deck(local_host, "?library_id=elsewhere")).content == []
