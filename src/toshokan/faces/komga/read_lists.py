"""Read lists: ordered lists of books across series, made of what the host knows of the reader.

Komga's read lists are lists a user makes; the host has no one to make them,
but it keeps every reader's places, so each reader has the lists those give
(:data:`READ_LISTS`), the same on every face's data: *Keep reading*, the books
the reader started and has not finished, the latest first. Mihon lists them
with Type = Read lists and opens one as a manga whose chapters are its books;
Aidoku and Komelia show them as read lists.

The second, *New chapters*, holds the chapters the host's checks found new in
the series the reader follows (:mod:`toshokan.faces.komga.following`) and the
reader has not finished, the latest found first: in Mihon, a manga whose
chapters are the reader's unread new ones.
"""

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import Visit
from toshokan.core.progress import ChapterRef, Position
from toshokan.errors import NotFound
from toshokan.faces.komga import content
from toshokan.faces.komga.answers import as_json, picture
from toshokan.faces.komga.content import Reading
from toshokan.faces.komga.dto import BookDto, ReadListDto, page_of
from toshokan.faces.komga.dto_of import book_of_chapter, reading_order
from toshokan.faces.komga.ids import book_of
from toshokan.faces.komga.listing import page_params

#: The most books a read list holds.
MAX_BOOKS = 50
#: Places read to find them.
PLACES_LOOKED_AT = 500

#: A read list's books for one reader, in its order, among the libraries they open, each with
#: the reader's place in it (None: not started).
Listed = list[tuple[ChapterRef, Position | None]]
Books = Callable[[Reading, dict[str, Visit]], Awaitable[Listed]]


@dataclass(frozen=True)
class ReadList:
    #: Its id: a word that names it on every host.
    key: str
    name: str
    summary: str
    books: Books


async def _keep_reading(reading: Reading, visits: dict[str, Visit]) -> Listed:
    """The books the reader started and has not finished, the latest first."""
    found: Listed = []
    for ref, place in await content.recent(reading, PLACES_LOOKED_AT):
        if ref.source in visits and not place.finished:
            found.append((ref, place))
        if len(found) == MAX_BOOKS:
            break
    return found


async def _new_chapters(reading: Reading, visits: dict[str, Visit]) -> Listed:
    """The unread chapters checks found new in the series the reader follows, latest first."""
    found = await content.updates(reading, MAX_BOOKS, unread_only=True)
    return [(ChapterRef(u.source, u.manga, u.chapter), None) for u in found if u.source in visits]


READ_LISTS: dict[str, ReadList] = {
    found.key: found
    for found in (
        ReadList(
            "keep-reading",
            "Keep reading",
            "The books you started and have not finished, the latest first.",
            _keep_reading,
        ),
        ReadList(
            "new-chapters",
            "New chapters",
            "The chapters found new in the series you follow that you have not read, the "
            "latest found first.",
            _new_chapters,
        ),
    )
}


def _read_list(text: str) -> ReadList:
    found = READ_LISTS.get(text)
    if found is None:
        raise NotFound("No read list has this id.")
    return found


async def _books(reading: Reading, chosen: ReadList) -> list[BookDto]:
    """The list's books as Komga's."""
    visits = {visit.slug: visit for visit in await content.opened_visits(reading)}
    return await books_of_places(reading, visits, await chosen.books(reading, visits))


async def books_of_places(
    reading: Reading,
    visits: dict[str, Visit],
    listed: Sequence[tuple[ChapterRef, Position | None]],
) -> list[BookDto]:
    """Chapters, with the reader's places in them, as Komga's books, those the source still
    lists, in order."""
    works = list(dict.fromkeys((ref.source, ref.manga) for ref, _ in listed))
    progress = await asyncio.gather(
        *(content.progress_of(reading, visits[source], [manga]) for source, manga in works)
    )
    chapters = {work: found[0] for work, found in zip(works, progress, strict=True)}

    async def book(ref: ChapterRef, place: Position | None) -> BookDto | None:
        series = chapters[ref.source, ref.manga]
        if series is None:
            return None
        ordered = reading_order(series.chapters)
        chapter = next((c for c in ordered if c.slug == ref.chapter), None)
        if chapter is None:
            return None
        visit = visits[ref.source]
        work, counts = await asyncio.gather(
            content.manga(reading, visit, ref.manga),
            content.page_counts(reading, visit, ref.manga, [chapter]),
        )
        number = ordered.index(chapter) + 1
        return book_of_chapter(ref, chapter, number, work.title, counts.get(chapter.slug), place)

    found = await asyncio.gather(*(book(ref, place) for ref, place in listed))
    return [one for one in found if one is not None]


def _dto(chosen: ReadList, books: list[BookDto]) -> ReadListDto:
    changed = max(
        (book.readProgress.lastModified for book in books if book.readProgress), default=None
    )
    moment = changed or datetime(1970, 1, 1, tzinfo=UTC)
    return ReadListDto(
        id=chosen.key,
        name=chosen.name,
        summary=chosen.summary,
        bookIds=[book.id for book in books],
        createdDate=moment,
        lastModifiedDate=moment,
    )


async def list_read_lists(request: Request, reading: Reading) -> Response:
    page, size = page_params(request.query_params)
    every = list(READ_LISTS.values())
    shown = every[page * size : (page + 1) * size]
    found = await asyncio.gather(*(_books(reading, chosen) for chosen in shown))
    dtos = [_dto(chosen, books) for chosen, books in zip(shown, found, strict=True)]
    return as_json(
        page_of(dtos, page, size, last=(page + 1) * size >= len(every), total=len(every))
    )


async def one_read_list(request: Request, reading: Reading) -> Response:
    chosen = _read_list(request.path_params["id"])
    return as_json(_dto(chosen, await _books(reading, chosen)))


async def read_list_books(request: Request, reading: Reading) -> Response:
    """The list's books, page by page (Mihon asks for them unpaged, as a manga's chapters)."""
    chosen = _read_list(request.path_params["id"])
    page, size = page_params(request.query_params)
    books = await _books(reading, chosen)
    shown = books[page * size : (page + 1) * size]
    return as_json(
        page_of(shown, page, size, last=(page + 1) * size >= len(books), total=len(books))
    )


async def read_list_thumbnail(request: Request, reading: Reading) -> Response:
    """The first page of the list's first book, small."""
    books = await _books(reading, _read_list(request.path_params["id"]))
    if not books:
        raise NotFound("This read list has no books.")
    ref = book_of(books[0].id)
    visit = await content.visit_of(reading, ref.source)
    image = await content.first_page_small(reading, visit, ref)
    if image is None:
        raise NotFound("This book has no pages.")
    return picture(image)
