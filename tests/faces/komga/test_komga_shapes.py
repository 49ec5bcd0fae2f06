"""Every answer of the face in exactly Komga's shape: its keys (no more, none missing), its JSON
types, enums and date patterns, decoded with the models written from Komga's own DTOs."""

import time
from typing import Any

import pytest
from pydantic import TypeAdapter

from tests.faces.komga.clients import komga_dtos as komga
from tests.faces.komga.clients.mihon_tracker import MihonKomgaTracker
from toshokan.core.progress import Position
from toshokan.faces.komga.ids import book_of
from toshokan.testing import ServedHost

from .helpers import SERVER, mihon

pytestmark = pytest.mark.anyio


async def get(host: ServedHost, path: str) -> bytes:
    answer = await host.client.get(f"/_/komga/api/{path}")
    assert answer.status_code == 200, (path, answer.text[:300])
    assert answer.headers["content-type"] == "application/json"
    return answer.content


def decoded(model: Any, body: bytes) -> Any:
    return TypeAdapter(model).validate_json(body)


async def walk(host: ServedHost) -> None:
    """Every listing, series, book, page list and progress answer of the host's first series."""
    libraries = decoded(list[komga.LibraryDto], await get(host, "v1/libraries"))
    decoded(komga.LibraryDto, await get(host, f"v1/libraries/{libraries[0].id}"))
    listing = decoded(komga.Page[komga.SeriesDto], await get(host, "v1/series?search=&page=0"))
    series = decoded(komga.SeriesDto, await get(host, f"v1/series/{listing.content[0].id}"))
    assert series.booksCount == series.booksUnreadCount + series.booksReadCount + (
        series.booksInProgressCount
    )
    books = decoded(
        komga.Page[komga.BookDto],
        await get(host, f"v1/series/{series.id}/books?unpaged=true&media_status=READY"),
    )
    assert books.size >= 20 and books.numberOfElements == series.booksCount
    # A place recorded elsewhere, so a book carries its readProgress too.
    ref = book_of(books.content[0].id)
    await host.core.progress.arecord("", ref, Position(0, 2, False, time.time(), device="web"))
    book = decoded(komga.BookDto, await get(host, f"v1/books/{books.content[0].id}"))
    assert book.readProgress is not None and book.readProgress.page == 1
    pages = decoded(list[komga.PageDto], await get(host, f"v1/books/{book.id}/pages"))
    assert [page.number for page in pages] == list(range(1, book.media.pagesCount + 1))
    decoded(
        komga.TachiyomiReadProgressV2Dto,
        await get(host, f"v2/series/{series.id}/read-progress/tachiyomi"),
    )
    decoded(komga.Page[komga.CollectionDto], await get(host, "v1/collections?unpaged=true"))
    decoded(komga.Page[komga.ReadListDto], await get(host, "v1/readlists?search=&page=0"))
    for names in ("genres", "tags", "publishers"):
        decoded(list[str], await get(host, f"v1/{names}"))
    decoded(list[komga.AuthorDto], await get(host, "v1/authors"))


async def test_the_local_library_answers_in_komgas_shapes(local_host: ServedHost) -> None:
    await walk(local_host)


async def test_mangadex_answers_in_komgas_shapes(mangadex_host: ServedHost) -> None:
    await walk(mangadex_host)


async def test_refusals_are_springs_error_page(local_host: ServedHost) -> None:
    answer = await local_host.client.get("/_/komga/api/v1/series/unknown")
    assert answer.status_code == 404
    error = komga.ErrorBody.model_validate_json(answer.content)
    assert (error.status, error.error, error.path) == (404, "Not Found", answer.url.path)


async def test_the_tracker_binds_and_follows_chapters_read(local_host: ServedHost) -> None:
    network, source = mihon(local_host)
    tracker = MihonKomgaTracker(network.tracker_client())
    series = (await source.popular(1)).mangas[0]
    chapters = sorted(c.chapter_number for c in await source.chapter_list(series.url))
    bound = await tracker.bind(series.url, {number: False for number in chapters})
    assert bound is not None
    track, synced = bound
    assert track.tracking_url == series.url and track.last_chapter_read == 0
    assert track.total_chapters == int(chapters[-1]) and not any(synced.values())
    track = await tracker.chapter_read(track, chapters[0])
    assert track.last_chapter_read == chapters[0]
    track = await tracker.chapter_read(track, chapters[-1])
    assert track.last_chapter_read == chapters[-1] and track.status == 3  # COMPLETED
    # The books say so too.
    books = await source.client.request("GET", f"{series.url}/books?unpaged=true")
    page = komga.Page[komga.BookDto].model_validate_json(books.content)
    assert all(
        book.readProgress is not None and book.readProgress.completed for book in page.content
    )
    assert SERVER in series.url


async def test_next_and_previous_books_walk_the_reading_order(local_host: ServedHost) -> None:
    listing = decoded(komga.Page[komga.SeriesDto], await get(local_host, "v1/series?search="))
    series = listing.content[0].id
    books = decoded(
        komga.Page[komga.BookDto], await get(local_host, f"v1/series/{series}/books?unpaged=true")
    ).content
    assert [book.number for book in books] == list(range(1, len(books) + 1))
    following = decoded(komga.BookDto, await get(local_host, f"v1/books/{books[0].id}/next"))
    assert following.id == books[1].id
    back = decoded(komga.BookDto, await get(local_host, f"v1/books/{following.id}/previous"))
    assert back.id == books[0].id
    for edge in (f"{books[0].id}/previous", f"{books[-1].id}/next"):
        answer = await local_host.client.get(f"/_/komga/api/v1/books/{edge}")
        assert answer.status_code == 404
        komga.ErrorBody.model_validate_json(answer.content)


async def test_a_series_tells_apps_how_it_reads(mangadex_host: ServedHost) -> None:
    """MangaDex's titles first published in Japanese read right to left: Komga's apps are
    told so in the series' metadata (readingDirection)."""
    listing = decoded(
        komga.Page[komga.SeriesDto], await get(mangadex_host, "v1/series?search=&page=0")
    )
    series = decoded(
        komga.SeriesDto, await get(mangadex_host, f"v1/series/{listing.content[0].id}")
    )
    assert series.metadata.readingDirection == "RIGHT_TO_LEFT"
