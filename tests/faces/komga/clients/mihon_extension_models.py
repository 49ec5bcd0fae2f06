"""What Mihon's Komga extension decodes, and what the user sees of it.

Written from keiyoushi/extensions-source (snapshot fd4236e0, extension
``versionCode = 68``), ``src/all/komga/src/eu/kanade/tachiyomi/extension/all/komga/``:

- ``dto/Dto.kt``, ``dto/PageWrapperDto.kt``: the models below, field for field,
  decoded with Mihon's ``Json`` (see :mod:`.kotlinx_json`: unknown keys
  ignored, nullable fields may be missing). The extension reads Komga's dates
  as plain ``String``; only the chapter date is parsed.
- ``KomgaUtils.kt``: ``parseDate``/``parseDateTime``, two
  ``SimpleDateFormat`` in UTC (``yyyy-MM-dd`` and ``yyyy-MM-dd'T'HH:mm:ss``,
  lenient, as Java's are by default) that give 0 on a ``ParseException``.
- The mapping to what the user sees: ``SeriesDto.toSManga`` (status, genres,
  description, writers as author, pencillers as artist), ``BookDto.toSManga``,
  ``ReadListDto.toSManga``, ``BookDto.getChapterName`` (Apache Commons Text
  ``StringSubstitutor`` with ``{`` ``}`` delimiters over the chapter name
  template, default ``{number} - {title} ({size})``), and the chapter fields
  ``chapterListParse`` fills in ``Komga.kt`` (scanlator = the ``translator``
  authors, date = release date, else created, else ``fileLastModified``).
  ``SManga``, ``SChapter`` and ``Page`` are the extensions library's
  (``eu.kanade.tachiyomi.source.model``).
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Generic, TypeVar

from .kotlinx_json import KBoolean, KFloat, KInt, KLong, KotlinxModel, KString

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
