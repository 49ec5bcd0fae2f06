"""Komga's own answers, exactly as Komga 1.x writes them: the shape a compatible server owes its clients.

Where each model comes from (gotson/komga, snapshot cba53ed3, Spring Boot 3.5;
``komga/src/main/kotlin/org/gotson/komga/`` below):

- ``interfaces/api/rest/dto/``: ``SeriesDto.kt`` (with ``SeriesMetadataDto``,
  ``BookMetadataAggregationDto``), ``BookDto.kt`` (with ``MediaDto``,
  ``BookMetadataDto``, ``ReadProgressDto``), ``PageDto.kt``, ``LibraryDto.kt``
  (+ ``ScanIntervalDto.kt``, ``SeriesCoverDto.kt``), ``AuthorDto.kt``,
  ``WebLinkDto.kt``, ``AlternateTitleDto.kt``, ``CollectionDto.kt``,
  ``ReadListDto.kt``, ``TachiyomiReadProgressDto.kt``,
  ``TachiyomiReadProgressV2Dto.kt``, ``TachiyomiReadProgressUpdateDto.kt``,
  ``ReadProgressUpdateDto.kt``.
- Every field is written, ``null`` included (Spring Boot's Jackson default
  inclusion); so every field is required here, nullable or not, and no other
  key is allowed. ``MediaDto.mediaProfile`` is computed from ``mediaType``
  (``domain/model/MediaType.kt``, ``MediaProfile.kt``): ``DIVINA`` for zip and
  rar, ``EPUB``, ``PDF``, ``""`` for anything else.
- Dates: every ``LocalDateTime`` carries ``@JsonFormat(pattern =
  "yyyy-MM-dd'T'HH:mm:ss'Z'")`` (UTC, no fraction, a literal ``Z``); every
  ``releaseDate`` is a ``LocalDate`` with ``"yyyy-MM-dd"``.
- Numbers: ``Int`` fields are whole numbers; ``Float`` fields
  (``numberSort``, ``lastReadContinuousNumberSort``, ``maxNumberSort``) are
  written with a fraction (``1.0``).
- Enums (``domain/model/SeriesMetadata.kt``, ``Media.kt``, ``ReadStatus.kt``):
  series status ``ENDED``/``ONGOING``/``ABANDONED``/``HIATUS``; reading
  direction ``LEFT_TO_RIGHT``/``RIGHT_TO_LEFT``/``VERTICAL``/``WEBTOON`` or
  ``""`` when unset (``infrastructure/jooq/main/SeriesDtoDao.kt``); media
  status ``UNKNOWN``/``ERROR``/``READY``/``UNSUPPORTED``/``OUTDATED``; read
  status (a query value) ``UNREAD``/``READ``/``IN_PROGRESS``.
- Lists are Spring Data's ``PageImpl`` as Jackson writes it (``Page`` below);
  ``unpaged=true`` answers one page of ``max(count, 20)``
  (``SeriesDtoDao.findAll``), so ``pageable`` is never the string ``"INSTANCE"``.
  ``/api/v1/libraries``, ``/genres``, ``/tags``, ``/publishers``, ``/authors``
  (v1) and ``/books/{id}/pages`` answer plain arrays.

Errors (``interfaces/api/rest/ErrorHandlingControllerAdvice.kt``,
``interfaces/mvc/ResourceNotFoundController.kt``, ``resources/application.yml``
``server.error.include-message: always``): a ``ResponseStatusException`` goes
through Spring Boot's error page, ``{"timestamp", "status", "error",
"message", "path"}`` (:class:`ErrorBody`); an ``EntityNotFoundException`` is
a 404 with no body; a bad body is a 400 ``{"violations": [{"fieldName",
"message"}]}``.

Authentication and sessions (``infrastructure/security/SecurityConfiguration.kt``,
``infrastructure/security/session/SessionConfiguration.kt``,
``SmartHttpSessionIdResolver.kt``):

- ``/api/**`` needs a user: HTTP Basic (``httpBasic``), ``X-API-Key`` (an API
  key, ``restAuthenticationFilter``), a remember-me cookie
  (``komga-remember-me``) or a session.
- Without credentials the answer is 401 with ``WWW-Authenticate: Basic
  realm="Realm"`` (Spring Security's ``BasicAuthenticationEntryPoint``; a
  request sent with ``X-Requested-With: XMLHttpRequest`` gets the 401 without
  it). ``/opds/v2/**`` answers its own entry point, also ``Basic realm="Realm"``.
- The session cookie is ``KOMGA-SESSION`` (not Spring's default ``SESSION``),
  written by Spring Session's ``DefaultCookieSerializer``: the session id in
  base64, ``Path=<context path>/`` (``/`` by default, so it covers
  ``/api/v1`` and ``/api/v2`` alike), ``HttpOnly``, ``SameSite=Lax``,
  ``Secure`` only when the request was https, no ``Max-Age`` (it lives 7 days
  idle on the server, ``server.servlet.session.timeout``). A Basic sign-in
  creates the session (session policy ``IF_REQUIRED``; Spring Security saves
  the Basic authentication to the HTTP session), which is what Mihon's tracker
  rides. An API key authenticates one request only
  (``RequestAttributeSecurityContextRepository``): no session.
- A client that sends ``X-Auth-Token`` has its session read from and written
  to that header instead of the cookie.
"""

import re
from datetime import date, datetime
from typing import Annotated, Generic, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

T = TypeVar("T")

_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _date_time(text: str) -> str:
    if not _DATE_TIME.fullmatch(text):
        raise ValueError(f"not yyyy-MM-dd'T'HH:mm:ss'Z': {text!r}")
    datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
    return text


def _date(text: str) -> str:
    if not _DATE.fullmatch(text):
        raise ValueError(f"not yyyy-MM-dd: {text!r}")
    date.fromisoformat(text)
    return text


DateTime = Annotated[str, AfterValidator(_date_time)]
"""A ``LocalDateTime`` with ``@JsonFormat(pattern = "yyyy-MM-dd'T'HH:mm:ss'Z'")``."""
LocalDate = Annotated[str, AfterValidator(_date)]
"""A ``LocalDate`` with ``@JsonFormat(pattern = "yyyy-MM-dd")``."""
Int = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]
Long = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]

SeriesStatus = Literal["ENDED", "ONGOING", "ABANDONED", "HIATUS"]
ReadingDirection = Literal["LEFT_TO_RIGHT", "RIGHT_TO_LEFT", "VERTICAL", "WEBTOON", ""]
MediaStatus = Literal["UNKNOWN", "ERROR", "READY", "UNSUPPORTED", "OUTDATED"]
MediaProfile = Literal["DIVINA", "PDF", "EPUB", ""]
MEDIA_PROFILES = {
    "application/zip": "DIVINA",
    "application/x-rar-compressed": "DIVINA",
    "application/x-rar-compressed; version=4": "DIVINA",
    "application/x-rar-compressed; version=5": "DIVINA",
    "application/epub+zip": "EPUB",
    "application/pdf": "PDF",
}


class KomgaModel(BaseModel):
    """Exactly Komga's keys, each present, each of Jackson's JSON type."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class AuthorDto(KomgaModel):
    name: str
    role: str


class WebLinkDto(KomgaModel):
    label: str
    url: str


class AlternateTitleDto(KomgaModel):
    label: str
    title: str


class SeriesMetadataDto(KomgaModel):
    status: SeriesStatus
    statusLock: bool
    title: str
    titleLock: bool
    titleSort: str
    titleSortLock: bool
    summary: str
    summaryLock: bool
    readingDirection: ReadingDirection
    readingDirectionLock: bool
    publisher: str
    publisherLock: bool
    ageRating: Int | None
    ageRatingLock: bool
    language: str
    languageLock: bool
    genres: list[str]
    genresLock: bool
    tags: list[str]
    tagsLock: bool
    totalBookCount: Int | None
    totalBookCountLock: bool
    sharingLabels: list[str]
    sharingLabelsLock: bool
    links: list[WebLinkDto]
    linksLock: bool
    alternateTitles: list[AlternateTitleDto]
    alternateTitlesLock: bool
    created: DateTime
    lastModified: DateTime


class BookMetadataAggregationDto(KomgaModel):
    authors: list[AuthorDto]
    tags: list[str]
    releaseDate: LocalDate | None
    summary: str
    summaryNumber: str
    created: DateTime
    lastModified: DateTime


class SeriesDto(KomgaModel):
    id: str
    libraryId: str
    name: str
    url: str
    created: DateTime
    lastModified: DateTime
    fileLastModified: DateTime
    booksCount: Int
    booksReadCount: Int
    booksUnreadCount: Int
    booksInProgressCount: Int
    metadata: SeriesMetadataDto
    booksMetadata: BookMetadataAggregationDto
    deleted: bool
    oneshot: bool


class MediaDto(KomgaModel):
    status: MediaStatus
    mediaType: str
    pagesCount: Int
    comment: str
    epubDivinaCompatible: bool
    epubIsKepub: bool
    mediaProfile: MediaProfile

    @model_validator(mode="after")
    def _profile_follows_type(self) -> "MediaDto":
        expected = MEDIA_PROFILES.get(self.mediaType, "")
        if self.mediaProfile != expected:
            raise ValueError(
                f"mediaProfile of {self.mediaType!r} is {expected!r}, not {self.mediaProfile!r}"
            )
        return self


class BookMetadataDto(KomgaModel):
    title: str
    titleLock: bool
    summary: str
    summaryLock: bool
    number: str
    numberLock: bool
    numberSort: float
    numberSortLock: bool
    releaseDate: LocalDate | None
    releaseDateLock: bool
    authors: list[AuthorDto]
    authorsLock: bool
    tags: list[str]
    tagsLock: bool
    isbn: str
    isbnLock: bool
    links: list[WebLinkDto]
    linksLock: bool
    created: DateTime
    lastModified: DateTime


class ReadProgressDto(KomgaModel):
    page: Int
    completed: bool
    readDate: DateTime
    created: DateTime
    lastModified: DateTime
    deviceId: str
    deviceName: str


class BookDto(KomgaModel):
    id: str
    seriesId: str
    seriesTitle: str
    libraryId: str
    name: str
    url: str
    number: Int
    created: DateTime
    lastModified: DateTime
    fileLastModified: DateTime
    sizeBytes: Long
    size: str
    media: MediaDto
    metadata: BookMetadataDto
    readProgress: ReadProgressDto | None
    deleted: bool
    fileHash: str
    oneshot: bool


class PageDto(KomgaModel):
    """One page of ``GET /api/v1/books/{id}/pages``; ``number`` counts from 1."""

    number: Int
    fileName: str
    mediaType: str
    width: Int | None
    height: Int | None
    sizeBytes: Long | None
    size: str


class LibraryDto(KomgaModel):
    id: str
    name: str
    root: str
    importComicInfoBook: bool
    importComicInfoSeries: bool
    importComicInfoCollection: bool
    importComicInfoReadList: bool
    importComicInfoSeriesAppendVolume: bool
    importEpubBook: bool
    importEpubSeries: bool
    importMylarSeries: bool
    importLocalArtwork: bool
    importBarcodeIsbn: bool
    scanForceModifiedTime: bool
    scanInterval: Literal["DISABLED", "HOURLY", "EVERY_6H", "EVERY_12H", "DAILY", "WEEKLY"]
    scanOnStartup: bool
    scanCbx: bool
    scanPdf: bool
    scanEpub: bool
    scanDirectoryExclusions: list[str]
    repairExtensions: bool
    convertToCbz: bool
    emptyTrashAfterScan: bool
    seriesCover: Literal["FIRST", "FIRST_UNREAD_OR_FIRST", "FIRST_UNREAD_OR_LAST", "LAST"]
    hashFiles: bool
    hashPages: bool
    hashKoreader: bool
    analyzeDimensions: bool
    oneshotsDirectory: str | None
    unavailable: bool


class CollectionDto(KomgaModel):
    id: str
    name: str
    ordered: bool
    seriesIds: list[str]
    createdDate: DateTime
    lastModifiedDate: DateTime
    filtered: bool


class ReadListDto(KomgaModel):
    id: str
    name: str
    summary: str
    ordered: bool
    bookIds: list[str]
    createdDate: DateTime
    lastModifiedDate: DateTime
    filtered: bool


class TachiyomiReadProgressDto(KomgaModel):
    """``GET /api/v1/readlists/{id}/read-progress/tachiyomi``."""

    booksCount: Int
    booksReadCount: Int
    booksUnreadCount: Int
    booksInProgressCount: Int
    lastReadContinuousIndex: Int


class TachiyomiReadProgressV2Dto(KomgaModel):
    """``GET /api/v2/series/{id}/read-progress/tachiyomi`` (``ReadProgressDtoDao.findProgressV2BySeries``).

    ``booksCount`` is the sum of the three others; ``lastReadContinuousNumberSort``
    the ``numberSort`` of the last book of the unbroken run of read books from
    the first (0 when the first is unread); ``maxNumberSort`` the largest
    ``numberSort`` of the series (0 when it has no books).
    """

    booksCount: Int
    booksReadCount: Int
    booksUnreadCount: Int
    booksInProgressCount: Int
    lastReadContinuousNumberSort: float
    maxNumberSort: float

    @model_validator(mode="after")
    def _counts_add_up(self) -> "TachiyomiReadProgressV2Dto":
        if (
            self.booksCount
            != self.booksReadCount + self.booksUnreadCount + self.booksInProgressCount
        ):
            raise ValueError("booksCount is not the sum of read, unread and in-progress books")
        return self


class SortDto(KomgaModel):
    empty: bool
    sorted: bool
    unsorted: bool


class PageableDto(KomgaModel):
    pageNumber: Int
    pageSize: Int
    sort: SortDto
    offset: Long
    paged: bool
    unpaged: bool


class Page(KomgaModel, Generic[T]):
    """Spring Data's ``PageImpl`` as Jackson writes it; ``number`` counts pages from 0."""

    content: list[T]
    pageable: PageableDto
    last: bool
    totalElements: Long
    totalPages: Int
    size: Int
    number: Int
    sort: SortDto
    first: bool
    numberOfElements: Int
    empty: bool


class ErrorBody(KomgaModel):
    """Spring Boot's error page (``DefaultErrorAttributes``) with ``include-message: always``."""

    timestamp: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$")]
    status: Int
    error: str
    message: str
    path: str


class ViolationDto(KomgaModel):
    fieldName: str | None
    message: str | None


class ValidationErrorResponse(KomgaModel):
    violations: list[ViolationDto]


# --- what clients send ------------------------------------------------------


class ReadProgressUpdateDto(BaseModel):
    """``PATCH /api/v1/books/{id}/read-progress`` (204): ``page`` positive, required unless ``completed`` is true."""

    model_config = ConfigDict(extra="ignore")

    page: Annotated[int, Field(gt=0)] | None = None
    completed: bool | None = None


class TachiyomiReadProgressUpdateV2Dto(BaseModel):
    """``PUT /api/v2/series/{id}/read-progress/tachiyomi`` (204): every book with ``numberSort`` at most this is marked read."""

    model_config = ConfigDict(extra="ignore")

    lastBookNumberSortRead: float


class TachiyomiReadProgressUpdateDto(BaseModel):
    """``PUT /api/v1/readlists/{id}/read-progress/tachiyomi`` (204): the first ``lastBookRead`` books are marked read."""

    model_config = ConfigDict(extra="ignore")

    lastBookRead: Annotated[int, Field(ge=0)]
