"""Mihon's Komga extension: the requests it makes and what the user sees of the answers.

Written from keiyoushi/extensions-source (snapshot fd4236e0, extension
``versionCode = 68``), ``src/all/komga/src/eu/kanade/tachiyomi/extension/all/komga/``:

- ``dto/Dto.kt``, ``dto/PageWrapperDto.kt``: the models below, field for field,
  decoded with Mihon's ``Json`` (see :mod:`.kotlinx_json`: unknown keys
  ignored, nullable fields may be missing). The extension reads Komga's dates
  as plain ``String``; only the chapter date is parsed.
- ``KomgaUtils.kt``: ``parseDate``/``parseDateTime``, two
  ``SimpleDateFormat`` in UTC (``yyyy-MM-dd`` and ``yyyy-MM-dd'T'HH:mm:ss``,
  lenient, as Java's are by default) that give 0 on a ``ParseException``.
- ``Komga.kt``: the requests (``searchMangaRequest`` builds every listing:
  ``search`` always present, even empty; ``page`` from 0; ``deleted=false``;
  filters from ``KomgaFilters.kt``; one ``sort``), which model decodes which
  answer (by the request URL: ``/api/v1/readlists`` or ``/api/v1/books``), the
  chapter list (``?unpaged=true&media_status=READY&deleted=false``, EPUBs
  dropped unless ``epubDivinaCompatible``, number = ``metadata.numberSort``,
  scanlator = the ``translator`` authors, date = release date, else created,
  else ``fileLastModified``), the page list (page ``number`` from 1, ``?convert=png``
  for types outside ``SUPPORTED_IMAGE_TYPES``) and the filter options it
  loads (``fetchFilterOptions``).
- ``KomgaFilters.kt``: how each filter lands in the query: multi-selects
  comma-joined in one parameter (``genre=a,b``), read statuses repeated,
  one ``author=name,role`` per author; OkHttp's ``addQueryParameter`` encodes
  the comma (``%2C``).
- Mapping to what the user sees: ``SeriesDto.toSManga`` (status, genres,
  description, writers as author, pencillers as artist), ``BookDto.toSManga``,
  ``ReadListDto.toSManga``, ``BookDto.getChapterName`` (Apache Commons Text
  ``StringSubstitutor`` with ``{`` ``}`` delimiters over the chapter name
  template, default ``{number} - {title} ({size})``).

Every listing and detail call goes through ``HttpSource``'s
``awaitSuccess``: a status outside 200-299 is an error the user sees
(:class:`~.okhttp_session.HttpError`). The filter options use ``await``
without that check, so a failed call shows as the "Failed to fetch
filtering options" header after three attempts.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Generic, TypeVar

from .kotlinx_json import (
    KBoolean,
    KFloat,
    KInt,
    KLong,
    KotlinxModel,
    KString,
    decode_as,
)
from .okhttp_session import OkHttpClient, Response, http_url

T = TypeVar("T")


class LibraryDto(KotlinxModel):
    id: KString
    name: KString


class AuthorDto(KotlinxModel):
    name: KString
    role: KString


class SeriesMetadataDto(KotlinxModel):
    status: KString
    created: KString | None = None
    lastModified: KString | None = None
    title: KString
    titleSort: KString
    summary: KString
    summaryLock: KBoolean
    readingDirection: KString
    readingDirectionLock: KBoolean
    publisher: KString
    publisherLock: KBoolean
    ageRating: KInt | None = None
    ageRatingLock: KBoolean
    language: KString
    languageLock: KBoolean
    genres: frozenset[KString]
    genresLock: KBoolean
    tags: frozenset[KString]
    tagsLock: KBoolean
    totalBookCount: KInt | None = None


class BookMetadataAggregationDto(KotlinxModel):
    authors: list[AuthorDto] = []
    tags: frozenset[KString] = frozenset()
    releaseDate: KString | None = None
    summary: KString
    summaryNumber: KString
    created: KString
    lastModified: KString


class SeriesDto(KotlinxModel):
    id: KString
    libraryId: KString
    name: KString
    created: KString | None = None
    lastModified: KString | None = None
    fileLastModified: KString
    booksCount: KInt
    metadata: SeriesMetadataDto
    booksMetadata: BookMetadataAggregationDto


class MediaDto(KotlinxModel):
    status: KString
    mediaType: KString
    pagesCount: KInt
    mediaProfile: KString = "DIVINA"
    epubDivinaCompatible: KBoolean = False


class BookMetadataDto(KotlinxModel):
    title: KString
    titleLock: KBoolean
    summary: KString
    summaryLock: KBoolean
    number: KString
    numberLock: KBoolean
    numberSort: KFloat
    numberSortLock: KBoolean
    releaseDate: KString | None = None
    releaseDateLock: KBoolean
    authors: list[AuthorDto]
    authorsLock: KBoolean
    tags: frozenset[KString]
    tagsLock: KBoolean


class BookDto(KotlinxModel):
    id: KString
    seriesId: KString
    seriesTitle: KString
    name: KString
    number: KFloat
    created: KString | None = None
    lastModified: KString | None = None
    fileLastModified: KString
    sizeBytes: KLong
    size: KString
    media: MediaDto
    metadata: BookMetadataDto


class PageDto(KotlinxModel):
    number: KInt
    fileName: KString
    mediaType: KString


class CollectionDto(KotlinxModel):
    id: KString
    name: KString
    ordered: KBoolean
    seriesIds: list[KString]
    createdDate: KString
    lastModifiedDate: KString
    filtered: KBoolean


class ReadListDto(KotlinxModel):
    id: KString
    name: KString
    summary: KString
    bookIds: list[KString]
    createdDate: KString
    lastModifiedDate: KString
    filtered: KBoolean


class PageWrapperDto(KotlinxModel, Generic[T]):
    content: list[T]
    empty: KBoolean
    first: KBoolean
    last: KBoolean
    number: KLong
    numberOfElements: KLong
    size: KLong
    totalElements: KLong
    totalPages: KLong


# --- dates (KomgaUtils.kt) -------------------------------------------------


class UnparseableDate(ValueError):
    """Where ``SimpleDateFormat.parse`` throws ``ParseException`` (the extension then shows no date)."""


_EPOCH_DAY = date(1970, 1, 1).toordinal()


def _simple_date_format_parse(text: str, fields: str) -> int:
    """Lenient ``SimpleDateFormat`` in UTC over ``yyyy-MM-dd`` [``'T'HH:mm:ss``], in epoch millis.

    As Java parses: spaces and tabs before a number are skipped, each number
    takes every digit that follows (no field abuts another), the literals
    must match, anything after the last field is ignored, and out-of-range
    values roll over (month 13 is January of the next year, second 60 the
    next minute). Not modelled: signs on numbers, years before the Gregorian
    reform (Java switches to the Julian calendar) and past 9999.
    """
    numbers: list[int] = []
    position = 0
    for token in re.findall(r"[yMdHms]+|'T'|.", fields):
        if token[0] in "yMdHms":
            while position < len(text) and text[position] in " \t":
                position += 1
            digits = re.match(r"[0-9]+", text[position:])
            if digits is None:
                raise UnparseableDate(f"Unparseable date: {text!r}")
            numbers.append(int(digits.group()))
            position += digits.end()
        else:
            literal = token.strip("'")
            if text[position : position + len(literal)] != literal:
                raise UnparseableDate(f"Unparseable date: {text!r}")
            position += len(literal)
    year, month, day, *clock = numbers
    hours, minutes, seconds = clock or (0, 0, 0)
    carried_year, month_index = divmod(year * 12 + month - 1, 12)
    if not 1583 <= carried_year <= 9999:
        raise NotImplementedError(
            f"year {carried_year} is outside what this model of Java's calendar covers"
        )
    days = date(carried_year, month_index + 1, 1).toordinal() - _EPOCH_DAY + day - 1
    return ((days * 24 + hours) * 60 + minutes) * 60_000 + seconds * 1000


def parse_date_strict(text: str) -> int:
    """``formatterDate.parse(date).time``; raises where the extension's ``parseDate`` gives 0."""
    return _simple_date_format_parse(text, "yyyy-MM-dd")


def parse_date_time_strict(text: str) -> int:
    """``formatterDateTime.parse(date).time``; raises where ``parseDateTime`` gives 0."""
    return _simple_date_format_parse(text, "yyyy-MM-dd'T'HH:mm:ss")


def parse_date(text: str) -> int:
    """The extension's ``parseDate``: epoch millis, 0 when the text does not parse."""
    try:
        return parse_date_strict(text)
    except UnparseableDate:
        return 0


def parse_date_time(text: str) -> int:
    """The extension's ``parseDateTime``: epoch millis, 0 when the text does not parse."""
    try:
        return parse_date_time_strict(text)
    except UnparseableDate:
        return 0


def millis_to_datetime(millis: int) -> datetime:
    return datetime.fromtimestamp(millis / 1000, UTC)


# --- what the user sees (SManga, SChapter, Page from the extensions library) ---

# SManga's status constants (extensions-lib ``eu.kanade.tachiyomi.source.model.SManga``).
UNKNOWN, ONGOING, COMPLETED, LICENSED, PUBLISHING_FINISHED, CANCELLED, ON_HIATUS = range(7)


@dataclass(frozen=True)
class SManga:
    url: str
    title: str
    thumbnail_url: str
    status: int = UNKNOWN
    genre: str | None = None
    description: str | None = None
    author: str | None = None
    artist: str | None = None


@dataclass(frozen=True)
class MangasPage:
    mangas: list[SManga]
    has_next_page: bool


@dataclass(frozen=True)
class SChapter:
    url: str
    name: str
    chapter_number: float
    scanlator: str
    date_upload: int


@dataclass(frozen=True)
class Page:
    index: int
    image_url: str


def _join(names: Sequence[str]) -> str:
    """Kotlin's ``joinToString()``: ", " between."""
    return ", ".join(names)


def _distinct(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _kotlin_sorted(items: Sequence[str]) -> list[str]:
    """``sorted()`` on Kotlin strings: UTF-16 code unit order, which differs from Python's past U+FFFF."""
    return sorted(items, key=lambda text: text.encode("utf-16-be"))


def series_to_smanga(series: SeriesDto, base_url: str) -> SManga:
    metadata, books = series.metadata, series.booksMetadata
    if (
        metadata.status == "ENDED"
        and metadata.totalBookCount is not None
        and series.booksCount < metadata.totalBookCount
    ):
        status = PUBLISHING_FINISHED
    else:
        status = {
            "ENDED": COMPLETED,
            "ONGOING": ONGOING,
            "ABANDONED": CANCELLED,
            "HIATUS": ON_HIATUS,
        }.get(metadata.status, UNKNOWN)
    roles: dict[str, list[str]] = {}
    for author in books.authors:
        roles.setdefault(author.role, []).append(author.name)
    writers, pencillers = roles.get("writer"), roles.get("penciller")
    url = f"{base_url}/api/v1/series/{series.id}"
    return SManga(
        url=url,
        title=metadata.title,
        thumbnail_url=f"{url}/thumbnail",
        status=status,
        genre=_join(_distinct(_kotlin_sorted([*metadata.genres, *metadata.tags, *books.tags]))),
        description=metadata.summary if metadata.summary.strip() else books.summary,
        author=_join(_distinct(writers)) if writers is not None else None,
        artist=_join(_distinct(pencillers)) if pencillers is not None else None,
    )


def book_to_smanga(book: BookDto, base_url: str) -> SManga:
    url = f"{base_url}/api/v1/books/{book.id}"
    author = _join([author.name for author in book.metadata.authors])
    return SManga(
        url=url,
        title=book.metadata.title,
        thumbnail_url=f"{url}/thumbnail",
        genre=_join(_distinct(list(book.metadata.tags))),
        description=book.metadata.summary,
        author=author,
        artist=author,
    )


def readlist_to_smanga(readlist: ReadListDto, base_url: str) -> SManga:
    url = f"{base_url}/api/v1/readlists/{readlist.id}"
    return SManga(
        url=url, title=readlist.name, thumbnail_url=f"{url}/thumbnail", description=readlist.summary
    )


DEFAULT_CHAPTER_NAME_TEMPLATE = "{number} - {title} ({size})"


def substitute(template: str, values: dict[str, str | None]) -> str:
    """Commons Text ``StringSubstitutor(values, "{", "}")``: ``$`` escapes, values substituted again.

    A variable whose value is ``null`` or absent stays as written; a value that
    refers back to itself is the ``IllegalStateException`` that makes the
    chapter list fail.
    """

    def expand(text: str, seen: tuple[str, ...]) -> str:
        out: list[str] = []
        position = 0
        while position < len(text):
            if text.startswith("${", position):
                out.append("{")
                position += 2
                continue
            match = re.compile(r"\{([^{}]*)\}").match(text, position)
            if match is None:
                out.append(text[position])
                position += 1
                continue
            name = match.group(1)
            value = values.get(name)
            if value is None:
                out.append(match.group())
            elif name in seen:
                raise RuntimeError(f"Infinite loop in property interpolation of {template}")
            else:
                out.append(expand(value, (*seen, name)))
            position = match.end()
        return "".join(out)

    return expand(template, ())


def chapter_name(book: BookDto, template: str, from_readlist: bool) -> str:
    values: dict[str, str | None] = {
        "title": book.metadata.title,
        "seriesTitle": book.seriesTitle,
        "number": book.metadata.number,
        "createdDate": book.created,
        "releaseDate": book.metadata.releaseDate,
        "size": book.size,
        "sizeBytes": str(book.sizeBytes),
    }
    name = substitute(template, values)
    return f"{book.seriesTitle} {name}" if from_readlist else name


def chapter_date(book: BookDto) -> int:
    if book.metadata.releaseDate is not None:
        return parse_date(book.metadata.releaseDate)
    if book.created is not None:
        return parse_date_time(book.created)
    return parse_date_time(book.fileLastModified)


def book_to_schapter(
    book: BookDto, base_url: str, number: float, template: str, from_readlist: bool
) -> SChapter:
    return SChapter(
        url=f"{base_url}/api/v1/books/{book.id}",
        name=chapter_name(book, template, from_readlist),
        chapter_number=number,
        scanlator=_join(
            [author.name for author in book.metadata.authors if author.role == "translator"]
        ),
        date_upload=chapter_date(book),
    )


SUPPORTED_IMAGE_TYPES = (
    "image/jpeg",
    "image/png",
    "image/gif",
    "image/webp",
    "image/jxl",
    "image/heif",
    "image/avif",
)


# --- filters (KomgaFilters.kt) and the search request -----------------------

TYPE_SERIES, TYPE_READLISTS, TYPE_BOOKS = range(3)
SORTS = ("Relevance", "Alphabetically", "Date added", "Date updated", "Random")
STATUSES = ("Ongoing", "Ended", "Abandoned", "Hiatus")


@dataclass(frozen=True)
class Sort:
    """``Filter.Sort.Selection``: an index into :data:`SORTS` and a direction."""

    index: int
    ascending: bool


@dataclass(frozen=True)
class SearchFilters:
    """The state of the filter sheet, in the order ``getFilterList`` lays it out.

    ``None`` stands for "the extension's default list" (``filters.ifEmpty {
    getFilterList() }``). ``collection`` is a collection id (its entry in the
    "Collection" select), ``statuses`` the shown names (``"Ongoing"``...),
    ``authors`` (name, role) pairs in the order of their role groups.
    """

    unread: bool = False
    in_progress: bool = False
    read: bool = False
    type: int = TYPE_SERIES
    collection: str | None = None
    libraries: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    genres: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    publishers: tuple[str, ...] = ()
    authors: tuple[tuple[str, str], ...] = ()
    sort: Sort | None = Sort(0, True)
    has_library_filter: bool = field(default=True, repr=False)


def _search_url(
    base_url: str, page: int, query: str, filters: SearchFilters, default_libraries: Sequence[str]
) -> str:
    if filters.collection is not None:
        path = f"collections/{filters.collection}/series"
    else:
        path = {TYPE_READLISTS: "readlists", TYPE_BOOKS: "books"}.get(filters.type, "series")
    params: list[tuple[str, str]] = [
        ("search", query),
        ("page", str(page - 1)),
        ("deleted", "false"),
    ]
    if not filters.has_library_filter and default_libraries:
        params.append(("library_id", ",".join(default_libraries)))
    if filters.unread:
        params += [("read_status", "UNREAD"), ("read_status", "IN_PROGRESS")]
    if filters.in_progress:
        params.append(("read_status", "IN_PROGRESS"))
    if filters.read:
        params.append(("read_status", "READ"))
    for name, values in (
        ("library_id", filters.libraries),
        ("status", tuple(status.upper() for status in filters.statuses)),
        ("genre", filters.genres),
        ("tag", filters.tags),
        ("publisher", filters.publishers),
    ):
        if values:
            params.append((name, ",".join(values)))
    params += [("author", f"{name},{role}") for name, role in filters.authors]
    if filters.sort is not None and 0 <= filters.sort.index < len(SORTS):
        criteria = (
            "relevance",
            "metadata.titleSort" if path == "series" else "name",
            "createdDate",
            "lastModifiedDate",
            "random",
        )
        direction = "asc" if filters.sort.ascending else "desc"
        params.append(("sort", f"{criteria[filters.sort.index]},{direction}"))
    return http_url(f"{base_url}/api/v1", path.split("/"), params)


@dataclass(frozen=True)
class FilterOptions:
    """What ``fetchFilterOptions`` loads for the filter sheet."""

    libraries: list[LibraryDto]
    collections: list[CollectionDto]
    genres: frozenset[str]
    tags: frozenset[str]
    publishers: frozenset[str]
    authors: dict[str, list[AuthorDto]]


class MihonKomgaSource:
    """One configured Komga source of the extension, over an :class:`OkHttpClient`.

    ``base_url`` is the address the user typed (the extension refuses one
    ending in ``/``). The client carries the extension's authenticator and the
    app's shared cookie jar (:func:`~.okhttp_session.MihonNetwork.extension_client`).
    """

    def __init__(
        self,
        client: OkHttpClient,
        base_url: str,
        *,
        default_libraries: Sequence[str] = (),
        chapter_name_template: str = DEFAULT_CHAPTER_NAME_TEMPLATE,
    ) -> None:
        if base_url.endswith("/"):
            raise ValueError("The URL is invalid, malformed, or ends with a slash")
        self.client = client
        self.base_url = base_url
        self.default_libraries = tuple(default_libraries)
        self.chapter_name_template = chapter_name_template

    async def _get(self, url: str, *, accept: str | None = None) -> Response:
        headers = {"Accept": accept} if accept else {}
        return await self.client.request("GET", url, headers=headers, check=True)

    def _series_page(self, response: Response) -> MangasPage:
        url = str(response.url)
        if "/api/v1/readlists" in url:
            readlists = PageWrapperDto[ReadListDto].decode(response.content)
            return MangasPage(
                [readlist_to_smanga(item, self.base_url) for item in readlists.content],
                not readlists.last,
            )
        if "/api/v1/books" in url:
            books = PageWrapperDto[BookDto].decode(response.content)
            return MangasPage(
                [book_to_smanga(item, self.base_url) for item in books.content], not books.last
            )
        series = PageWrapperDto[SeriesDto].decode(response.content)
        return MangasPage(
            [series_to_smanga(item, self.base_url) for item in series.content], not series.last
        )

    def search_url(self, page: int, query: str, filters: SearchFilters | None) -> str:
        """The URL ``searchMangaRequest`` builds; ``filters=None`` is the default filter sheet."""
        if filters is None:
            filters = SearchFilters(libraries=self.default_libraries)
        return _search_url(self.base_url, page, query, filters, self.default_libraries)

    async def popular(self, page: int) -> MangasPage:
        filters = SearchFilters(sort=Sort(1, True), has_library_filter=False)
        return self._series_page(await self._get(self.search_url(page, "", filters)))

    async def latest(self, page: int) -> MangasPage:
        filters = SearchFilters(sort=Sort(3, False), has_library_filter=False)
        return self._series_page(await self._get(self.search_url(page, "", filters)))

    async def search(
        self, page: int, query: str, filters: SearchFilters | None = None
    ) -> MangasPage:
        return self._series_page(await self._get(self.search_url(page, query, filters)))

    async def manga_details(self, manga_url: str) -> SManga:
        response = await self._get(manga_url)
        if "/api/v1/readlists" in str(response.url):
            return readlist_to_smanga(ReadListDto.decode(response.content), self.base_url)
        if "/api/v1/books" in str(response.url):
            return book_to_smanga(BookDto.decode(response.content), self.base_url)
        return series_to_smanga(SeriesDto.decode(response.content), self.base_url)

    async def series_details(self, series_id: str) -> SManga:
        return await self.manga_details(f"{self.base_url}/api/v1/series/{series_id}")

    async def chapter_list(self, manga_url: str) -> list[SChapter]:
        """``chapterListRequest`` + ``chapterListParse`` for a series, read list or book URL."""
        template = self.chapter_name_template
        if "/api/v1/books" in manga_url:
            response = await self._get(f"{manga_url}?unpaged=true&media_status=READY&deleted=false")
            book = BookDto.decode(response.content)
            return [book_to_schapter(book, self.base_url, 1.0, template, from_readlist=True)]
        response = await self._get(
            f"{manga_url}/books?unpaged=true&media_status=READY&deleted=false"
        )
        from_readlist = "/api/v1/readlists" in str(response.url)
        books = [
            book
            for book in PageWrapperDto[BookDto].decode(response.content).content
            if book.media.mediaProfile != "EPUB" or book.media.epubDivinaCompatible
        ]
        chapters = [
            book_to_schapter(
                book,
                self.base_url,
                float(index + 1) if from_readlist else book.metadata.numberSort,
                template,
                from_readlist,
            )
            for index, book in enumerate(books)
        ]
        return sorted(chapters, key=lambda chapter: chapter.chapter_number, reverse=True)

    async def chapters(self, series_id: str) -> list[SChapter]:
        return await self.chapter_list(f"{self.base_url}/api/v1/series/{series_id}")

    async def page_list(self, chapter_url: str) -> list[Page]:
        response = await self._get(f"{chapter_url}/pages")
        pages = decode_as(list[PageDto], response.content)
        return [
            Page(
                page.number,
                f"{response.url}/{page.number}"
                + ("" if page.mediaType in SUPPORTED_IMAGE_TYPES else "?convert=png"),
            )
            for page in pages
        ]

    async def pages(self, book_id: str) -> list[Page]:
        return await self.page_list(f"{self.base_url}/api/v1/books/{book_id}")

    async def page_image(self, url: str) -> Response:
        """``imageRequest``: the page's URL with ``Accept: image/*,*/*;q=0.8``; the bytes are the page."""
        return await self._get(url, accept="image/*,*/*;q=0.8")

    async def filter_lists(self) -> FilterOptions:
        """``fetchFilterOptions``: six calls in turn; any failure leaves the sheet without options."""
        base = self.base_url

        async def body(path: str) -> bytes:
            return (await self.client.request("GET", f"{base}{path}")).content

        libraries = decode_as(list[LibraryDto], await body("/api/v1/libraries"))
        collections = (
            PageWrapperDto[CollectionDto]
            .decode(await body("/api/v1/collections?unpaged=true"))
            .content
        )
        genres = decode_as(frozenset[KString], await body("/api/v1/genres"))
        tags = decode_as(frozenset[KString], await body("/api/v1/tags"))
        publishers = decode_as(frozenset[KString], await body("/api/v1/publishers"))
        authors: dict[str, list[AuthorDto]] = {}
        for author in decode_as(list[AuthorDto], await body("/api/v1/authors")):
            authors.setdefault(author.role, []).append(author)
        return FilterOptions(libraries, collections, genres, tags, publishers, authors)

    @staticmethod
    def manga_web_url(manga_url: str) -> str:
        """``getMangaUrl``: the address "Open in WebView" opens for a series, read list or book."""
        return manga_url.replace("/api/v1", "")

    @staticmethod
    def chapter_web_url(chapter_url: str) -> str:
        """``getChapterUrl``: Komga's web reader page of the book."""
        return chapter_url.replace("/api/v1/books", "/book")
