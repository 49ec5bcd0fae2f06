"""``GET /api/v1/books``: books across series, as Komga lists them to Mihon's "Books" browse type.

Mihon's extension lists books when a user picks Type = Books
(``/api/v1/books?search=&page=0&deleted=false&sort=...``) and opens each as a
manga of one chapter. A source searches works, not chapters, so a library's
books are its works' chapters, in the order of its own search:

- each source is searched with the listing's query, filters and sort (Komga's
  ``name`` is the title sort, its dates the source's date sorts), and the
  chapters of each work found follow one another in reading order (newest
  first when the sort runs descending);
- a read-status filter keeps the books the reader's places say (unread: no
  place; in progress: a place short of the end; read: finished);
- a page over several libraries holds each library's same page of its own
  books, as the series listing joins them.

Sorted by the reader's place (``readProgress.readDate``, what Komelia's *keep
reading* and *recently read* shelves ask), the books are the reader's places
instead, the latest first.

Reaching page ``n`` lists the chapters of the works before it: free for a
library whose files are here, one request per work (then cached) for an
upstream source, at most :data:`CHAPTER_LISTS_AT_ONCE` at a time, and no more
than :data:`MAX_WORKS` works a request, past which a source's listing ends.
A source whose walk reached its end knows its number of books; a library whose
files are here walks on to its end (within :data:`MAX_WORKS`) to tell it.
"""

import asyncio
from dataclasses import dataclass, replace

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import Visit
from toshokan.core.progress import ChapterRef, Position
from toshokan.faces.komga import content, following
from toshokan.faces.komga.answers import as_json
from toshokan.faces.komga.content import CHAPTER_LISTS_AT_ONCE, Reading
from toshokan.faces.komga.dto import BookDto, page_of
from toshokan.faces.komga.dto_of import book_of_chapter, reading_order
from toshokan.faces.komga.ids import library_id
from toshokan.faces.komga.listing import SeriesQuery, search_body, series_query
from toshokan.faces.komga.read_lists import books_of_places
from toshokan.faces.komga.series import SKIPPED, joined_page
from toshokan.models import Chapter

#: The most works one request lists the chapters of, per source.
MAX_WORKS = 500
#: Komga's sorts by the reader's place (``readProgress.readDate``, ``readProgress.lastModified``).
BY_READ_DATE = "readProgress."
#: The reader's latest places a listing by read date looks at.
PLACES_LOOKED_AT = 1000
#: Works asked for per search while walking a source.
WORKS_PER_SEARCH = 50


@dataclass(frozen=True)
class Book:
    """A chapter as a book of the listing, with what its DTO needs."""

    ref: ChapterRef
    chapter: Chapter
    number: int
    title: str
    place: Position | None


@dataclass(frozen=True)
class SourceBooks:
    """One source's page of books, whether it has more, and its count when known."""

    books: list[Book]
    more: bool
    total: int | None


def book_status(place: Position | None) -> str:
    """Komga's read status of one book."""
    if place is None:
        return "UNREAD"
    return "READ" if place.finished else "IN_PROGRESS"


async def list_books(request: Request, reading: Reading) -> Response:
    return await _books(reading, series_query(request.query_params))


async def latest_books(request: Request, reading: Reading) -> Response:
    """``GET /api/v1/books/latest``: the chapters the checks found new to the reader, the
    latest found first; for a reader who follows nothing, the sources' books, newest first."""
    query = series_query(request.query_params)
    if found := await following.followed(reading, query):
        return as_json(await following.latest_books(reading, found, query.page, query.size))
    return await _books(reading, replace(query, sort="createdDate", ascending=False))


async def _books(reading: Reading, query: SeriesQuery) -> Response:
    visits = [
        visit
        for visit in await content.opened_visits(reading)
        if not query.libraries or library_id(visit.slug) in query.libraries
    ]
    if query.sort.startswith(BY_READ_DATE):
        return await _read_lately(reading, visits, query)
    asked = [visit for visit in visits if search_body(query, visit.config) is not None]
    answers = await asyncio.gather(
        *(_source_books(reading, visit, query) for visit in asked),
        return_exceptions=len(asked) > 1,
    )
    found: list[tuple[Visit, SourceBooks]] = []
    for visit, answer in zip(asked, answers, strict=True):
        if isinstance(answer, SKIPPED):
            continue
        if isinstance(answer, BaseException):
            raise answer
        found.append((visit, answer))
    dtos = await asyncio.gather(*(_dtos(reading, visit, part.books) for visit, part in found))
    books = [book for part in dtos for book in part]
    more = any(part.more for _, part in found)
    totals = [part.total for _, part in found]
    return as_json(joined_page(books, query.page, query.size, not more, totals))


async def _read_lately(reading: Reading, visits: list[Visit], query: SeriesQuery) -> Response:
    """Books by when the reader last read them, the latest first (Komelia's and Komga's home
    shelves: *keep reading*, *recently read*): the reader's places, any face's, filtered by
    read status, among the reader's :data:`PLACES_LOOKED_AT` latest."""
    opened = {visit.slug: visit for visit in visits}
    places = [
        (ref, place)
        for ref, place in await content.recent(reading, PLACES_LOOKED_AT)
        if ref.source in opened
        and (not query.read_statuses or book_status(place) in query.read_statuses)
    ]
    if query.ascending:
        places.reverse()
    shown = places[query.page * query.size : (query.page + 1) * query.size]
    books = await books_of_places(reading, opened, shown)
    last = (query.page + 1) * query.size >= len(places)
    return as_json(page_of(books, query.page, query.size, last=last, total=len(places)))


async def _source_books(reading: Reading, visit: Visit, query: SeriesQuery) -> SourceBooks:
    """Page ``query.page`` of the source's books: its works' chapters, one after another."""
    body = search_body(query, visit.config)
    assert body is not None
    first, end = query.page * query.size, (query.page + 1) * query.size
    descending = body["direction"] == "desc" and query.sort in ("createdDate", "lastModifiedDate")
    counting = content.holds_files(reading, visit)
    books: list[Book] = []
    seen = works = 0
    search_page = 1
    while works < MAX_WORKS:
        asked = {**body, "page": search_page, "limit": WORKS_PER_SEARCH}
        answer = await content.search(reading, visit, asked)
        for start in range(0, len(answer.results), CHAPTER_LISTS_AT_ONCE):
            batch = answer.results[start : start + CHAPTER_LISTS_AT_ONCE]
            listed = await content.progress_of(reading, visit, [entry.slug for entry in batch])
            works += len(batch)
            for entry, progress in zip(batch, listed, strict=True):
                if progress is None:
                    continue
                ordered = reading_order(progress.chapters)
                numbers = {c.slug: n for n, c in enumerate(ordered, start=1)}
                for chapter in reversed(ordered) if descending else ordered:
                    place = progress.places.get(chapter.slug)
                    if query.read_statuses and book_status(place) not in query.read_statuses:
                        continue
                    if first <= seen < end:
                        ref = ChapterRef(visit.slug, entry.slug, chapter.slug)
                        books.append(Book(ref, chapter, numbers[chapter.slug], entry.title, place))
                    seen += 1
            if seen > end and not counting:
                return SourceBooks(books, True, None)
        if not answer.more:
            return SourceBooks(books, seen > end, seen)
        search_page += 1
    return SourceBooks(books, seen > end, None)


async def _dtos(reading: Reading, visit: Visit, books: list[Book]) -> list[BookDto]:
    """The books as Komga's, with their page counts where the source knows them cheaply."""
    counts: dict[tuple[str, str], int] = {}
    for manga_slug in dict.fromkeys(book.ref.manga for book in books):
        chapters = [book.chapter for book in books if book.ref.manga == manga_slug]
        found = await content.page_counts(reading, visit, manga_slug, chapters)
        counts.update(((manga_slug, slug), count) for slug, count in found.items())
    return [
        book_of_chapter(
            book.ref,
            book.chapter,
            book.number,
            book.title,
            counts.get((book.ref.manga, book.chapter.slug)),
            book.place,
        )
        for book in books
    ]
