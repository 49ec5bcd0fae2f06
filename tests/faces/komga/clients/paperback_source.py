"""Paperback's Komga source (Paperback 0.9): the requests it makes and what it reads of the answers.

Written from Paperback-iOS/extensions-default (snapshot fe4def4b),
``src/Komga/``:

- ``komga.ts``: every call goes through the client ``@hey-api/openapi-ts``
  generates from Komga's ``openapi.json`` (``openapi-ts.config.mjs``), with
  ``Authorization: Basic`` on every request (the ``auth`` callback answers
  ``username:password`` for the ``basic`` scheme, which the client encodes
  with ``btoa``: Latin-1). A call's ``data`` is set only for a 2xx answer;
  the source throws when it is missing. Query arrays go out one parameter per
  value (``sort=titleSort``); parameters left ``undefined`` are not sent.
  - ``getSearchFilters``: ``GET /api/v1/genres``, ``/api/v1/tags/series``,
    ``/api/v1/collections``, ``/api/v1/libraries``.
  - ``getSearchResults``: ``POST /api/v1/series/list?page=<from 0>&size=40&sort=titleSort``
    with ``{"fullTextSearch": <title>, "condition": {"allOf": [...]}}``;
    every picked genre, tag, collection or library is sent as a ``tag``
    condition (``is`` when included, ``isNot`` when excluded) with its value
    URL-encoded; an empty page ends the listing.
  - ``getMangaDetails``: ``GET /api/v1/series/<id>`` (``metadata.genres``,
    ``metadata.tags``, ``booksMetadata.authors`` by role, ``metadata.summary``
    else ``booksMetadata.summary``).
  - ``getChapters``: ``POST /api/v1/books/list?unpaged=true`` with
    ``{"condition": {"seriesId": is <id>, "deleted": isFalse, "mediaStatus":
    is READY}}`` (one object, three keys); a chapter's number is
    ``parseFloat(metadata.number)``, its order ``metadata.numberSort``, its
    date ``metadata.releaseDate`` else ``fileLastModified``.
  - ``getChapterDetails``: ``GET /api/v1/books/<id>/pages``; page ``n`` is
    ``/api/v1/books/<id>/pages/<n>``, ``?convert=png`` outside JPEG, PNG, GIF,
    WebP and PDF.
  - ``getDiscoverSectionItems``: *On Deck* ``GET /api/v1/books/ondeck``
    (``seriesTitle``, ``seriesId``, the book's thumbnail); *Continue Reading*
    ``POST /api/v1/series/list?sort=readProgress.readDate,desc`` with
    ``{"condition": {"deleted": isFalse, "readStatus": is IN_PROGRESS}}``;
    *Recently Added* and *Recently Updated* ``GET /api/v1/series/new`` and
    ``/updated`` with ``deleted=false``; each pages on while ``last`` is false.
- ``utils/connection.ts``: the settings' connection check, ``GET
  /api/v2/users/me``, connected when the answer has an ``email``.

TypeScript checks no types at run time: these answers are decoded with
Komga's own DTOs (:mod:`.komga_dtos`), the types the client was generated
from, so a field the source reads is there with the type it expects.
"""

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from .komga_dtos import BookDto, CollectionDto, LibraryDto, Page, PageDto, SeriesDto
from .okhttp_session import CookieJar, OkHttpClient, Response, okhttp_basic

PAGE_SIZE = 40
SUPPORTED_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp", "application/pdf")
JSON_BODY = {"Content-Type": "application/json"}


@dataclass(frozen=True)
class SearchFilters:
    """What ``getSearchFilters`` loads: the options of the four multi-selects."""

    genres: list[str]
    tags: list[str]
    libraries: list[LibraryDto]
    collections: list[CollectionDto]


@dataclass(frozen=True)
class Chapter:
    chapter_id: str
    number: float
    sorting_index: float
    created: str


def paperback_client(transport: Any, username: str, password: str) -> OkHttpClient:
    """The generated client: Basic (``btoa``, Latin-1) on every request, its own cookie store."""
    return OkHttpClient(
        transport, CookieJar(), headers={"Authorization": okhttp_basic(username, password)}
    )


class PaperbackKomgaSource:
    def __init__(self, client: OkHttpClient, base_url: str) -> None:
        self.client = client
        self.base_url = base_url

    async def _call(self, method: str, path: str, body: Any = None) -> bytes:
        """One call of the generated client; the source throws when ``data`` is missing."""
        content = None if body is None else json.dumps(body).encode()
        response: Response = await self.client.request(
            method,
            f"{self.base_url}{path}",
            headers=JSON_BODY if content is not None else None,
            content=content,
            check=True,
        )
        return response.content

    async def check_connection(self) -> str | None:
        """``checkKomgaConnection``: the name it is connected as, or None."""
        user = json.loads(await self._call("GET", "/api/v2/users/me"))
        return user.get("email") or None

    async def search_filters(self) -> SearchFilters:
        genres = json.loads(await self._call("GET", "/api/v1/genres"))
        tags = json.loads(await self._call("GET", "/api/v1/tags/series"))
        collections = Page[CollectionDto].model_validate_json(
            await self._call("GET", "/api/v1/collections")
        )
        libraries = [
            LibraryDto.model_validate(item)
            for item in json.loads(await self._call("GET", "/api/v1/libraries"))
        ]
        assert all(isinstance(name, str) for name in [*genres, *tags])
        return SearchFilters(genres, tags, libraries, collections.content)

    async def search(
        self, title: str | None, included_genres: tuple[str, ...] = (), page: int = 0
    ) -> tuple[list[tuple[str, str]], int | None]:
        """``getSearchResults``: (series id, title) tiles, and the next page (None at the end)."""
        conditions = [
            {"tag": {"operator": "is", "value": quote(genre)}} for genre in included_genres
        ]
        body: dict[str, Any] = {} if title is None else {"fullTextSearch": title}
        if conditions:
            body["condition"] = {"allOf": conditions}
        answer = await self._call(
            "POST", f"/api/v1/series/list?page={page}&size={PAGE_SIZE}&sort=titleSort", body
        )
        series = Page[SeriesDto].model_validate_json(answer).content
        tiles = [(one.id, one.metadata.title) for one in series]
        return tiles, (page + 1 if tiles else None)

    async def manga_details(self, series_id: str) -> SeriesDto:
        return SeriesDto.model_validate_json(await self._call("GET", f"/api/v1/series/{series_id}"))

    async def chapters(self, series_id: str) -> list[Chapter]:
        body = {
            "condition": {
                "seriesId": {"operator": "is", "value": series_id},
                "deleted": {"operator": "isFalse"},
                "mediaStatus": {"operator": "is", "value": "READY"},
            }
        }
        answer = await self._call("POST", "/api/v1/books/list?unpaged=true", body)
        return [
            Chapter(
                book.id,
                float(book.metadata.number),
                book.metadata.numberSort,
                book.metadata.releaseDate or book.fileLastModified,
            )
            for book in Page[BookDto].model_validate_json(answer).content
        ]

    async def chapter_pages(self, book_id: str) -> list[str]:
        pages = [
            PageDto.model_validate(item)
            for item in json.loads(await self._call("GET", f"/api/v1/books/{book_id}/pages"))
        ]
        base = f"{self.base_url}/api/v1/books/{book_id}/pages"
        return [
            f"{base}/{page.number}"
            + ("" if page.mediaType in SUPPORTED_IMAGE_TYPES else "?convert=png")
            for page in pages
        ]

    async def image(self, url: str) -> Response:
        return await self.client.request("GET", url, check=True)

    async def on_deck(self) -> list[tuple[str, str, str]]:
        """*On Deck*: (series title, series id, book thumbnail URL) of the first page."""
        books = Page[BookDto].model_validate_json(await self._call("GET", "/api/v1/books/ondeck"))
        return [
            (book.seriesTitle, book.seriesId, f"{self.base_url}/api/v1/books/{book.id}/thumbnail")
            for book in books.content
        ]

    async def continue_reading(self) -> list[tuple[str, str]]:
        """*Continue Reading*: (series title, series id) of the first page."""
        body = {
            "condition": {
                "deleted": {"operator": "isFalse"},
                "readStatus": {"operator": "is", "value": "IN_PROGRESS"},
            }
        }
        answer = await self._call(
            "POST", "/api/v1/series/list?sort=readProgress.readDate%2Cdesc", body
        )
        return [(one.name, one.id) for one in Page[SeriesDto].model_validate_json(answer).content]

    async def recently(self, section: str) -> list[str]:
        """*Recently Added* (``new``) or *Recently Updated* (``updated``): series names."""
        answer = await self._call("GET", f"/api/v1/series/{section}?deleted=false")
        return [one.name for one in Page[SeriesDto].model_validate_json(answer).content]
