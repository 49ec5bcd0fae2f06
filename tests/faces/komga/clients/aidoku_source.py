"""Aidoku's built-in Komga source and tracker: the requests they make and how they decode the answers.

Written from Aidoku/Aidoku (snapshot eb812a56):

- ``Shared/Sources/Komga/KomgaModels.swift``: the models below. Swift's
  ``JSONDecoder`` with synthesized ``Codable``: unknown keys ignored; a
  non-optional property must be present and not ``null``; an optional one
  (``T?``, ``decodeIfPresent``) may be missing or ``null`` but not of another
  type; a ``String`` is only a JSON string; an ``Int`` a number with no
  fractional part (``1.0`` passes, ``1.5`` does not); a ``Float`` any number;
  a ``Bool`` only ``true``/``false``; a ``String``-backed enum only one of
  its raw values (series status ``ENDED``/``ONGOING``/``ABANDONED``/
  ``HIATUS``; reading direction ``LEFT_TO_RIGHT``/``RIGHT_TO_LEFT``/
  ``VERTICAL``/``SCROLL``/``WEBTOON``/``""``).
- ``Shared/Sources/Komga/KomgaHelper.swift``, ``request``: ``Authorization:
  Basic`` and ``Accept: application/json`` on every request (relative paths
  under the server address, which gets a trailing slash); the status code is
  not looked at: the body is decoded as the expected type, else as
  ``KomgaError`` (``{"error": String, "message": String?}``, which Spring
  Boot's error body satisfies) whose ``error`` the user sees, else
  "UNKNOWN_ERROR". Dates decode with a custom strategy: a JSON string
  formatted ``yyyy-MM-dd'T'HH:mm:ss'Z'`` in GMT, else ``yyyy-MM-dd``, else
  ``Date.distantPast`` (shown as no date); anything but a string fails the
  whole answer.
- ``Shared/Sources/Komga/KomgaSource.swift``: sign-in is ``GET
  api/v2/users/me`` with Basic, accepted when the answer's ``email`` equals
  the name typed; search is ``POST api/v1/series/list?page=<from 0>&size=20&sort=<field>%2C<asc|desc>``
  with a search-condition body (``{"condition": {"allOf": [{"deleted":
  {"operator": "isFalse"}}, ...]}, "fullTextSearch": <query, left out when
  empty>}``); a series is ``GET api/v1/series/<id>``; its chapters ``POST
  api/v1/books/list?unpaged=true&sort=metadata.numberSort%2Cdesc`` with
  ``allOf [seriesId is <id>, deleted isFalse]``, EPUBs dropped unless
  ``epubDivinaCompatible``; pages ``GET api/v1/books/<id>/pages``, each
  ``api/v1/books/<id>/pages/<number>`` with ``?convert=png`` outside JPEG,
  PNG, GIF and WebP, fetched with Basic and ``Accept: image/*``; the filter
  sheet loads ``api/v1/libraries``, ``genres``, ``tags``, ``publishers``,
  ``languages``, ``age-ratings``, ``series/release-dates`` and
  ``sharing-labels``.
- ``Shared/Tracking/Trackers/komga/KomgaApi.swift`` (``KomgaTracker.swift``
  drives it): every call carries Basic. ``getState`` GETs
  ``api/v2/series/<id>/read-progress/tachiyomi`` and needs only
  ``lastReadContinuousNumberSort`` and ``maxNumberSort`` (the counts are
  optional); ``update`` PUTs ``{"lastBookNumberSortRead": <Float>}`` with the
  chapter number floored to a whole number, which ``JSONEncoder`` writes
  without a fraction (``3``); page progress PATCHes
  ``api/v1/books/<id>/read-progress`` with ``{"page", "completed"}`` (the page
  count, read from ``GET api/v1/books/<id>``, when completed) or DELETEs it to
  mark the book unread; the series' books' progress comes from ``GET
  api/v1/series/<id>/books?unpaged=true`` (``readProgress`` of each book).

Not modelled: the home page and library listings (``series/new``,
``series/updated``, ``books/ondeck``, ``books/list`` sorted by read date),
mirrors, and ICU's leniency on one-digit months and days.
"""

import json
import math
from datetime import UTC, datetime
from typing import Annotated, Any, Generic, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, PlainValidator, TypeAdapter, ValidationError

from .kotlinx_json import to_float32
from .okhttp_session import OkHttpClient, Response

T = TypeVar("T")

SUPPORTED_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
SORT_FIELDS = (
    "metadata.titleSort",
    "createdDate",
    "lastModifiedDate",
    "readDate",
    "booksMetadata.releaseDate",
    "name",
    "booksCount",
    "random",
)


def _string(value: object) -> str:
    if isinstance(value, str):
        return value
    raise ValueError(f"Expected to decode String but found {type(value).__name__} instead.")


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"Expected to decode Int but found {type(value).__name__} instead.")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"Parsed JSON number <{value}> does not fit in Int.")
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"Parsed JSON number <{value}> does not fit in Int.")
    return int(value)


def _float(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"Expected to decode Float but found {type(value).__name__} instead.")
    number = to_float32(float(value))
    if not math.isfinite(number):
        raise ValueError(f"Parsed JSON number <{value}> does not fit in Float.")
    return number


def _bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError(f"Expected to decode Bool but found {type(value).__name__} instead.")


def parse_aidoku_date(text: str) -> datetime | None:
    """The source's date strategy: the full string in one of Komga's two patterns, else ``None`` (``distantPast``)."""
    for pattern in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%d"):
        try:
            parsed = datetime.strptime(text, pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
        if text == parsed.strftime(pattern):
            return parsed
    return None


def _date(value: object) -> datetime | None:
    return parse_aidoku_date(_string(value))


SString = Annotated[str, PlainValidator(_string)]
SInt = Annotated[int, PlainValidator(_int)]
SFloat = Annotated[float, PlainValidator(_float)]
SBool = Annotated[bool, PlainValidator(_bool)]
SDate = Annotated[datetime | None, PlainValidator(_date)]
"""A ``Date``: a JSON string is required; one in neither pattern reads as ``None`` (``distantPast``)."""


class SwiftModel(BaseModel):
    """A ``Codable`` struct decoded by ``JSONDecoder``: unknown keys ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    @classmethod
    def decode(cls, text: str | bytes) -> Self:
        return cls.model_validate(json.loads(text))


class KomgaError(SwiftModel):
    error: SString
    message: SString | None = None


class KomgaLibrary(SwiftModel):
    id: SString
    name: SString


class KomgaPage(SwiftModel):
    number: SInt
    mediaType: SString


class Author(SwiftModel):
    name: SString
    role: SString | None = None


class BookMedia(SwiftModel):
    mediaProfile: SString
    epubDivinaCompatible: SBool
    pagesCount: SInt


class BookMetadata(SwiftModel):
    title: SString
    number: SString
    numberSort: SFloat
    authors: list[Author]
    tags: list[SString]
    created: SDate
    releaseDate: SDate = None


class KomgaBookReadProgress(SwiftModel):
    page: SInt
    completed: SBool
    lastModified: SDate = None


class KomgaBook(SwiftModel):
    id: SString
    seriesId: SString
    libraryId: SString
    name: SString
    media: BookMedia
    metadata: BookMetadata
    readProgress: KomgaBookReadProgress | None = None


SeriesStatus = Literal["ENDED", "ONGOING", "ABANDONED", "HIATUS"]
ReadingDirection = Literal["LEFT_TO_RIGHT", "RIGHT_TO_LEFT", "VERTICAL", "SCROLL", "WEBTOON", ""]


class SeriesMetadata(SwiftModel):
    ageRating: SInt | None = None
    status: SeriesStatus
    title: SString
    summary: SString
    readingDirection: ReadingDirection
    genres: list[SString]
    tags: list[SString]


class BooksMetadata(SwiftModel):
    authors: list[Author]
    summary: SString | None = None
    tags: list[SString]


class KomgaSeries(SwiftModel):
    id: SString
    libraryId: SString
    name: SString
    metadata: SeriesMetadata
    booksMetadata: BooksMetadata
    booksCount: SInt
    oneshot: SBool | None = None


class KomgaPageResponse(SwiftModel, Generic[T]):
    content: T
    totalPages: SInt


class KomgaReadProgress(SwiftModel):
    booksCount: SInt | None = None
    booksReadCount: SInt | None = None
    booksUnreadCount: SInt | None = None
    booksInProgressCount: SInt | None = None
    lastReadContinuousNumberSort: SFloat
    maxNumberSort: SFloat


class UserMe(SwiftModel):
    email: SString


class AidokuSourceError(Exception):
    """``SourceError.message``: what Aidoku shows when an answer does not decode."""


def swift_float_json(number: float) -> str:
    """``JSONEncoder``'s text for a ``Float``: the shortest digits that read back, no ``.0`` on whole numbers."""
    number = to_float32(number)
    if number.is_integer() and abs(number) < 2**53:
        return str(int(number))
    for digits in range(1, 10):
        text = f"{number:.{digits}g}"
        if to_float32(float(text)) == number:
            return text
    return repr(number)


def condition(key: str, operator: str, value: Any = None) -> dict[str, Any]:
    """One ``KomgaSearchCondition`` as Aidoku encodes it (``value`` left out when nil)."""
    inner: dict[str, Any] = {"operator": operator}
    if value is not None:
        inner["value"] = value
    return {key: inner}


def search_body(conditions: list[dict[str, Any]], query: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"condition": {"allOf": [condition("deleted", "isFalse"), *conditions]}}
    if query:
        body["fullTextSearch"] = query
    return body


class AidokuKomgaSource:
    """One Komga server added in Aidoku, over a client that sends Basic up front (:func:`~.okhttp_session.aidoku_client`)."""

    def __init__(self, client: OkHttpClient, server: str) -> None:
        self.client = client
        self.server = server if server.endswith("/") else f"{server}/"

    async def _request(
        self,
        shape: Any,
        path: str,
        *,
        body: dict[str, Any] | None = None,
        accept: str | None = None,
    ) -> Any:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if accept:
            headers["Accept"] = accept
        content = json.dumps(body, separators=(",", ":")).encode() if body is not None else None
        answer = await self.client.request(
            "POST" if body is not None else "GET",
            self.server + path,
            headers=headers,
            content=content,
        )
        return self.decode(shape, answer)

    @staticmethod
    def decode(shape: Any, answer: Response) -> Any:
        try:
            return TypeAdapter(shape).validate_python(json.loads(answer.content))
        except (ValueError, ValidationError):
            pass
        try:
            raise AidokuSourceError(KomgaError.decode(answer.content).error)
        except (ValueError, ValidationError):
            raise AidokuSourceError("UNKNOWN_ERROR") from None

    async def login(self, email: str) -> bool:
        """``handleBasicLogin``: the client's Basic must belong to ``email``."""
        try:
            me = await self._request(UserMe, "api/v2/users/me")
        except AidokuSourceError:
            return False
        return bool(me.email == email)

    async def search(
        self,
        page: int,
        query: str | None = None,
        conditions: list[dict[str, Any]] | None = None,
        sort: int = 0,
        ascending: bool = True,
    ) -> KomgaPageResponse[list[KomgaSeries]]:
        direction = "asc" if ascending else "desc"
        path = f"api/v1/series/list?page={page - 1}&size=20&sort={SORT_FIELDS[sort]}%2C{direction}"
        return await self._request(
            KomgaPageResponse[list[KomgaSeries]], path, body=search_body(conditions or [], query)
        )

    async def series(self, series_id: str) -> KomgaSeries:
        return await self._request(KomgaSeries, f"api/v1/series/{series_id}")

    async def chapters(self, series_id: str) -> list[KomgaBook]:
        body = {
            "condition": {
                "allOf": [condition("seriesId", "is", series_id), condition("deleted", "isFalse")]
            }
        }
        answer = await self._request(
            KomgaPageResponse[list[KomgaBook]],
            "api/v1/books/list?unpaged=true&sort=metadata.numberSort%2Cdesc",
            body=body,
        )
        return [
            book
            for book in answer.content
            if book.media.mediaProfile != "EPUB" or book.media.epubDivinaCompatible
        ]

    async def pages(self, book_id: str) -> list[str]:
        pages = await self._request(list[KomgaPage], f"api/v1/books/{book_id}/pages")
        base = f"{self.server}api/v1/books/{book_id}/pages/"
        return [
            f"{base}{page.number}"
            + ("" if page.mediaType in SUPPORTED_IMAGE_TYPES else "?convert=png")
            for page in pages
        ]

    async def page_image(self, url: str) -> Response:
        return await self.client.request("GET", url, headers={"Accept": "image/*"})

    async def filters(self) -> dict[str, Any]:
        """``getSearchFilters``: eight lists, all required for the sheet to load."""
        result: dict[str, Any] = {
            "libraries": await self._request(list[KomgaLibrary], "api/v1/libraries")
        }
        for path in (
            "genres",
            "tags",
            "publishers",
            "languages",
            "age-ratings",
            "series/release-dates",
            "sharing-labels",
        ):
            result[path] = await self._request(list[SString], f"api/v1/{path}")
        return result

    async def tracker_state(self, series_id: str) -> KomgaReadProgress:
        return await self._request(
            KomgaReadProgress, f"api/v2/series/{series_id}/read-progress/tachiyomi"
        )

    async def tracker_update(self, series_id: str, last_chapter_read: float) -> Response:
        """``KomgaApi.update`` in chapter mode: the number floored, sent as a ``Float``."""
        return await self.client.request(
            "PUT",
            f"{self.server}api/v2/series/{series_id}/read-progress/tachiyomi",
            headers={"Content-Type": "application/json"},
            content=f'{{"lastBookNumberSortRead":{swift_float_json(math.floor(last_chapter_read))}}}'.encode(),
        )

    async def book_progress(self, book_id: str, page: int, completed: bool) -> Response:
        """``KomgaApi.updateReadProgress``: PATCH the page (the page count when completed), or DELETE to unread."""
        url = f"{self.server}api/v1/books/{book_id}/read-progress"
        if not completed and page <= 0:
            return await self.client.request("DELETE", url)
        if completed:
            book = await self._request(KomgaBook, f"api/v1/books/{book_id}")
            page = book.media.pagesCount
        body = json.dumps({"page": page, "completed": completed}, separators=(",", ":")).encode()
        return await self.client.request(
            "PATCH", url, headers={"Content-Type": "application/json"}, content=body
        )

    async def series_read_progress(self, series_id: str) -> dict[str, KomgaBookReadProgress]:
        """``getSeriesReadProgress``: each book's progress, from the series' books."""
        answer = await self._request(
            KomgaPageResponse[list[KomgaBook]], f"api/v1/series/{series_id}/books?unpaged=true"
        )
        return {
            book.id: book.readProgress for book in answer.content if book.readProgress is not None
        }
