"""A Paperback session through its Komga source, on a host with readers: the connection check,
the filter sheet, search with a genre, a series, its chapters and pages, and the home page's
sections once the reader has read elsewhere."""

from typing import cast

import pytest

from tests.faces.komga.clients.okhttp_session import AsyncHttpClient
from tests.faces.komga.clients.paperback_source import PaperbackKomgaSource, paperback_client
from toshokan.testing import ServedHost

from .helpers import SERVER, add_reader

pytestmark = pytest.mark.anyio


async def test_a_paperback_session(local_host: ServedHost) -> None:
    await add_reader(local_host, "mika", "hunter22")
    client = paperback_client(cast(AsyncHttpClient, local_host.client), "mika", "hunter22")
    source = PaperbackKomgaSource(client, SERVER)
    assert await source.check_connection() == "mika"

    filters = await source.search_filters()
    assert [library.id for library in filters.libraries] == ["local"]
    assert filters.genres and filters.tags == [] and filters.collections

    tiles, following = await source.search("")
    assert len(tiles) == 3 and following == 1
    assert await source.search("", page=1) == ([], None)  # an empty page ends the listing
    genre = filters.genres[0]
    picked, _ = await source.search("", (genre,))
    assert picked and len(picked) < len(tiles)
    for series_id, _ in picked:
        assert genre in (await source.manga_details(series_id)).metadata.genres

    series_id, title = tiles[0]
    details = await source.manga_details(series_id)
    assert details.metadata.title == title
    chapters = await source.chapters(series_id)
    assert chapters and all(chapter.number == chapter.sorting_index for chapter in chapters)
    first = min(chapters, key=lambda chapter: chapter.sorting_index)
    pages = await source.chapter_pages(first.chapter_id)
    assert pages and (await source.image(pages[0])).header("content-type") == "image/jpeg"

    # Home: nothing started yet, then a chapter read and one begun in another app.
    assert await source.on_deck() == [] and await source.continue_reading() == []
    assert len(await source.recently("new")) == len(await source.recently("updated")) == 3
    await client.request(
        "PATCH",
        f"{SERVER}/api/v1/books/{first.chapter_id}/read-progress",
        content=b'{"completed": true}',
        headers={"Content-Type": "application/json"},
        check=True,
    )
    deck = await source.on_deck()
    assert [(name, shown) for name, shown, _ in deck] == [(title, series_id)]
    assert (await source.image(deck[0][2])).status_code == 200
    other_id, other_title = tiles[1]
    begun = (await source.chapters(other_id))[0]
    await client.request(
        "PATCH",
        f"{SERVER}/api/v1/books/{begun.chapter_id}/read-progress",
        content=b'{"page": 1}',
        headers={"Content-Type": "application/json"},
        check=True,
    )
    # Both are in progress as Komga counts it: one chapter of several read, or one begun.
    assert set(await source.continue_reading()) == {(title, series_id), (other_title, other_id)}
    # A chapter begun without one read puts nothing on deck.
    assert [shown for _, shown, _ in await source.on_deck()] == [series_id]
