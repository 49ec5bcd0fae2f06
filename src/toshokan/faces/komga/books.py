"""Books (one per chapter version), their pages and page images, and each reader's progress.

Pages count from 1 (Komga's way) and come from the core's image pipeline: the
host fetches upstream pages itself, with the source's Referer and
credentials, and answers JPEG, the type the page list declares, or PNG when
the app asks ``?convert=png``. A book's ``readProgress`` is the reader's place
in the chapter from the progress store every face shares, where pages count
from 0.
"""

import asyncio
import time

from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import Visit
from toshokan.core.bodies import read_json
from toshokan.core.progress import ChapterRef, Position
from toshokan.errors import InvalidRequest, NotFound
from toshokan.faces.komga import content
from toshokan.faces.komga.answers import as_json, no_content, picture
from toshokan.faces.komga.conditions import series_of_books_search
from toshokan.faces.komga.content import Reading
from toshokan.faces.komga.dto import BookDto, PageDto, page_of
from toshokan.faces.komga.dto_of import book_of_chapter, reading_order
from toshokan.faces.komga.ids import book_of, series_of
from toshokan.faces.komga.listing import DEFAULT_SIZE, page_params
from toshokan.models import Chapter

#: The longest page number written in a path: more digits than any chapter has pages.
MAX_PAGE_DIGITS = 6


class ReadProgressUpdate(BaseModel):
    """Komga's ``ReadProgressUpdateDto``: a page (from 1), or the book marked read or not."""

    model_config = ConfigDict(strict=True)
    page: int | None = None
    completed: bool | None = None


async def _book(
    reading: Reading, text: str
) -> tuple[Visit, ChapterRef, Chapter, list[Chapter], str]:
    """The book an id names: its source, chapter, its work's chapters in order, and title."""
    ref = book_of(text)
    visit = await content.visit_of(reading, ref.source)
    chapter, every = await content.chapter(reading, visit, ref)
    work = await content.manga(reading, visit, ref.manga)
    return visit, ref, chapter, reading_order(every), work.title


async def series_books(request: Request, reading: Reading) -> Response:
    """``GET /api/v1/series/{id}/books``: Mihon's chapter list."""
    return await _books(request, reading, request.path_params["id"])


async def search_books(request: Request, reading: Reading) -> Response:
    """``POST /api/v1/books/list``: Aidoku's chapter list, the books of one series."""
    return await _books(request, reading, series_of_books_search(await read_json(request)))


async def _books(request: Request, reading: Reading, series: str) -> Response:
    source, manga_slug = series_of(series)
    page, size = page_params(request.query_params)
    visit = await content.visit_of(reading, source)
    work, chapters, places = await asyncio.gather(
        content.manga(reading, visit, manga_slug),
        content.chapters(reading, visit, manga_slug),
        content.positions(reading, source, manga_slug),
    )
    ordered = reading_order(chapters)
    numbers = {c.slug: n for n, c in enumerate(ordered, start=1)}
    if request.query_params.get("sort", "").endswith(",desc"):
        ordered.reverse()
    if request.query_params.get("unpaged") == "true":
        # Every book at once, as Mihon asks (a source's chapter list is bounded by the source),
        # in one page of at least Komga's default size, as Komga answers it.
        page, size = 0, max(len(ordered), DEFAULT_SIZE)
    shown = ordered[page * size : (page + 1) * size]
    counts = await content.page_counts(reading, visit, manga_slug, shown)
    books = [
        book_of_chapter(
            ChapterRef(source, manga_slug, chapter.slug),
            chapter,
            numbers[chapter.slug],
            work.title,
            counts.get(chapter.slug),
            places.get(chapter.slug),
        )
        for chapter in shown
    ]
    last = (page + 1) * size >= len(ordered)
    return as_json(page_of(books, page, size, last=last, total=len(ordered)))


async def one_book(request: Request, reading: Reading) -> Response:
    visit, ref, chapter, ordered, title = await _book(reading, request.path_params["id"])
    return as_json(await _book_dto(reading, visit, ref, chapter, ordered, title))


async def next_book(request: Request, reading: Reading) -> Response:
    """``/next``: the book after this one in the series' reading order; 404 after the last."""
    return await _neighbour(request, reading, 1)


async def previous_book(request: Request, reading: Reading) -> Response:
    """``/previous``: the book before this one; 404 before the first."""
    return await _neighbour(request, reading, -1)


async def _neighbour(request: Request, reading: Reading, step: int) -> Response:
    visit, ref, chapter, ordered, title = await _book(reading, request.path_params["id"])
    index = ordered.index(chapter) + step
    if not 0 <= index < len(ordered):
        raise NotFound("The series has no book there.")
    neighbour = ordered[index]
    other = ChapterRef(ref.source, ref.manga, neighbour.slug)
    return as_json(await _book_dto(reading, visit, other, neighbour, ordered, title))


async def _book_dto(
    reading: Reading,
    visit: Visit,
    ref: ChapterRef,
    chapter: Chapter,
    ordered: list[Chapter],
    title: str,
) -> BookDto:
    """One book, with its page count and the reader's place in it."""
    urls, place = await asyncio.gather(
        content.page_urls(reading, visit, ref), content.position(reading, ref)
    )
    number = ordered.index(chapter) + 1
    return book_of_chapter(ref, chapter, number, title, len(urls), place)


async def book_pages(request: Request, reading: Reading, ref: ChapterRef) -> Response:
    visit = await content.visit_of(reading, ref.source)
    urls = await content.page_urls(reading, visit, ref)
    return as_json(
        [
            PageDto(number=n, fileName=f"{n:04d}.jpg", mediaType="image/jpeg")
            for n in range(1, len(urls) + 1)
        ]
    )


async def page_image(request: Request, reading: Reading, ref: ChapterRef) -> Response:
    number = request.path_params["number"]
    if not (number.isascii() and number.isdigit()) or len(number) > MAX_PAGE_DIGITS:
        raise NotFound("A page number is a whole number from 1.")
    visit = await content.visit_of(reading, ref.source)
    png = request.query_params.get("convert") == "png"
    count, image = await content.page_image(reading, visit, ref, int(number) - 1, png=png)
    if image is None:
        raise NotFound(f"This book has pages 1 to {count}.")
    return picture(image)


async def book_thumbnail(request: Request, reading: Reading, ref: ChapterRef) -> Response:
    """The book's first page, small."""
    visit = await content.visit_of(reading, ref.source)
    image = await content.first_page_small(reading, visit, ref)
    if image is None:
        raise NotFound("This book has no pages.")
    return picture(image)


async def mark_progress(request: Request, reading: Reading) -> Response:
    """``PATCH``, by Komga's rules: ``completed: true`` marks the book read (at its last
    page); otherwise ``page`` (from 1) is the place, and the book is read at its last page.
    Marking a book unread is ``DELETE``."""
    try:
        update = ReadProgressUpdate.model_validate(await read_json(request))
    except ValidationError:
        update = None
    if update is None or (update.page is None and not update.completed):
        raise InvalidRequest("Send page (a whole number from 1), or completed: true.")
    ref = book_of(request.path_params["id"])
    visit = await content.visit_of(reading, ref.source)
    await content.chapter(reading, visit, ref)  # a chapter the source no longer has is 404
    # A chapter without pages is read at its one place.
    pages = max(len(await content.page_urls(reading, visit, ref)), 1)
    page = pages if update.completed else (update.page or 0)
    if not 1 <= page <= pages:
        raise InvalidRequest(f"page must be from 1 to {pages}.")
    place = Position(page - 1, pages, page >= pages, time.time(), device=reading.device)
    await content.record(reading, ref, place)
    return no_content()


async def forget_progress(request: Request, reading: Reading) -> Response:
    """``DELETE``: the book is unread again."""
    ref = book_of(request.path_params["id"])
    await content.visit_of(reading, ref.source)
    await content.forget(reading, ref)
    return no_content()
