"""The face's routes: the part of Komga's REST API its clients call, under ``/_/komga``."""

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route

from toshokan.errors import MethodNotAllowed, NotFound
from toshokan.faces.komga import (
    book_listing,
    books,
    collections,
    on_deck,
    read_lists,
    series,
    tracker,
)
from toshokan.faces.komga.answers import PREFIX, BookHandler, Handler, book_route, komga_route

V1 = f"{PREFIX}/api/v1"
V2 = f"{PREFIX}/api/v2"
#: A route without methods takes GET only: the face's last routes refuse every other method.
EVERY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

GET: list[tuple[str, Handler]] = [
    (f"{V1}/libraries", series.list_libraries),
    (f"{V1}/libraries/{{id}}", series.one_library),
    (f"{V1}/series", series.list_series),
    # Before ``series/{id}``, which would take the word for an id.
    (f"{V1}/series/release-dates", series.empty_list),
    (f"{V1}/series/new", series.new_series),
    (f"{V1}/series/updated", series.updated_series),
    (f"{V1}/series/{{id}}", series.one_series),
    (f"{V1}/series/{{id}}/thumbnail", series.series_thumbnail),
    (f"{V1}/series/{{id}}/books", books.series_books),
    (f"{V1}/books", book_listing.list_books),
    # Before ``books/{id}``, which would take the word for an id.
    (f"{V1}/books/ondeck", on_deck.on_deck),
    (f"{V1}/books/latest", book_listing.latest_books),
    (f"{V1}/books/{{id}}", books.one_book),
    (f"{V1}/books/{{id}}/next", books.next_book),
    (f"{V1}/books/{{id}}/previous", books.previous_book),
    (f"{V1}/collections", collections.list_collections),
    (f"{V1}/collections/{{id}}", collections.one_collection),
    (f"{V1}/collections/{{id}}/series", collections.collection_series),
    (f"{V1}/readlists", read_lists.list_read_lists),
    (f"{V1}/readlists/{{id}}", read_lists.one_read_list),
    (f"{V1}/readlists/{{id}}/books", read_lists.read_list_books),
    (f"{V1}/readlists/{{id}}/thumbnail", read_lists.read_list_thumbnail),
    (f"{V1}/genres", series.genres),
    (f"{V1}/tags", series.empty_list),
    # Series' and books' tags apart (Paperback's filter sheet asks for the series'): none either.
    (f"{V1}/tags/series", series.empty_list),
    (f"{V1}/tags/book", series.empty_list),
    (f"{V1}/publishers", series.publishers),
    (f"{V1}/authors", series.authors),
    (f"{V1}/languages", series.languages),
    (f"{V1}/age-ratings", series.empty_list),
    (f"{V1}/sharing-labels", series.empty_list),
    (f"{V1}/users/me", series.me),
    (f"{V2}/users/me", series.me),
    (f"{V2}/series/{{id}}/read-progress/tachiyomi", tracker.tachiyomi_progress),
]
#: Routes about one book's pages: the book's source entered with the reader (``book_route``).
BOOK_GET: list[tuple[str, BookHandler]] = [
    (f"{V1}/books/{{id}}/pages", books.book_pages),
    (f"{V1}/books/{{id}}/pages/{{number}}", books.page_image),
    (f"{V1}/books/{{id}}/thumbnail", books.book_thumbnail),
]


def komga_routes() -> list[BaseRoute]:
    routes: list[BaseRoute] = [
        Route(path, komga_route(handler), methods=["GET"]) for path, handler in GET
    ]
    routes += [Route(path, book_route(handler), methods=["GET"]) for path, handler in BOOK_GET]
    routes += [
        Route(f"{V1}/series/list", komga_route(series.search_series), methods=["POST"]),
        Route(f"{V1}/books/list", komga_route(books.search_books), methods=["POST"]),
        Route(
            f"{V1}/books/{{id}}/read-progress",
            komga_route(books.mark_progress),
            methods=["PATCH"],
        ),
        Route(
            f"{V1}/books/{{id}}/read-progress",
            komga_route(books.forget_progress),
            methods=["DELETE"],
        ),
        Route(
            f"{V2}/series/{{id}}/read-progress/tachiyomi",
            komga_route(tracker.mark_tachiyomi_progress),
            methods=["PUT"],
        ),
    ]
    elsewhere = _elsewhere(list(routes))
    return [
        *routes,
        Route(f"{PREFIX}/{{rest:path}}", elsewhere, methods=EVERY_METHOD),
        Route(PREFIX, elsewhere, methods=EVERY_METHOD),
    ]


def _elsewhere(known: list[BaseRoute]) -> Callable[[Request], Awaitable[Response]]:
    """Any other request under the face, refused as Spring refuses it: 405 with ``Allow`` for
    a path the face serves with other methods, else 404."""

    async def refuse(request: Request) -> Response:
        allowed = {
            method
            for route in known
            if isinstance(route, Route) and route.matches(request.scope)[0] is Match.PARTIAL
            for method in route.methods or ()
        }
        if allowed:
            raise MethodNotAllowed(
                f"Request method '{request.method}' is not supported",
                headers={"Allow": ", ".join(sorted(allowed))},
            )
        raise NotFound("No such endpoint in this Komga-compatible API.")

    return refuse
