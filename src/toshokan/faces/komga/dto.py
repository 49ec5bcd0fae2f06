"""The shapes Komga 1.x answers with, as its REST DTOs declare them (field names, types, dates).

Exactly Komga's keys, every one present (Jackson writes nulls too): the apps'
decoders fail on the first required field missing, and stricter clients on a
key they do not know. Dates are written in the patterns Komga's Jackson
annotations give them: ``yyyy-MM-dd'T'HH:mm:ss'Z'`` for moments (UTC) and
``yyyy-MM-dd`` for release dates.
"""

from datetime import UTC, date, datetime
from typing import Annotated, Generic, TypeVar

from pydantic import BaseModel, PlainSerializer

T = TypeVar("T")


def _date_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


#: ``yyyy-MM-dd'T'HH:mm:ss'Z'``: every moment, in UTC, to the second.
DateTime = Annotated[datetime, PlainSerializer(_date_time, return_type=str)]
#: ``yyyy-MM-dd``: release dates.
Day = Annotated[date, PlainSerializer(lambda day: day.strftime("%Y-%m-%d"), return_type=str)]


class AuthorDto(BaseModel):
    name: str
    role: str


class WebLinkDto(BaseModel):
    label: str
    url: str


class AlternateTitleDto(BaseModel):
    label: str
    title: str


class SortDto(BaseModel):
    """Spring Data's sort of a page; answers are in the order the face chose, so unsorted."""

    empty: bool = True
    sorted: bool = False
    unsorted: bool = True


class PageableDto(BaseModel):
    pageNumber: int
    pageSize: int
    sort: SortDto = SortDto()
    offset: int
    paged: bool = True
    unpaged: bool = False


class PageWrapper(BaseModel, Generic[T]):
    """Spring Data's page, as Komga serialises it (pages counted from 0)."""

    content: list[T]
    pageable: PageableDto
    sort: SortDto = SortDto()
    empty: bool
    first: bool
    last: bool
    number: int
    numberOfElements: int
    size: int
    totalElements: int
    totalPages: int


class LibraryDto(BaseModel):
    id: str
    name: str
    root: str = ""
    importComicInfoBook: bool = False
    importComicInfoSeries: bool = False
    importComicInfoCollection: bool = False
    importComicInfoReadList: bool = False
    importComicInfoSeriesAppendVolume: bool = False
    importEpubBook: bool = False
    importEpubSeries: bool = False
    importMylarSeries: bool = False
    importLocalArtwork: bool = False
    importBarcodeIsbn: bool = False
    scanForceModifiedTime: bool = False
    #: A source is not scanned by Komga's rules; the host watches or asks it itself.
    scanInterval: str = "DISABLED"
    scanOnStartup: bool = False
    scanCbx: bool = True
    scanPdf: bool = False
    scanEpub: bool = False
    scanDirectoryExclusions: list[str] = []
    repairExtensions: bool = False
    convertToCbz: bool = False
    emptyTrashAfterScan: bool = False
    seriesCover: str = "FIRST"
    hashFiles: bool = False
    hashPages: bool = False
    hashKoreader: bool = False
    analyzeDimensions: bool = False
    oneshotsDirectory: str | None = None
    unavailable: bool = False


class SeriesMetadataDto(BaseModel):
    status: str
    statusLock: bool = False
    title: str
    titleLock: bool = False
    titleSort: str
    titleSortLock: bool = False
    alternateTitles: list[AlternateTitleDto]
    alternateTitlesLock: bool = False
    summary: str
    summaryLock: bool = False
    readingDirection: str = ""
    readingDirectionLock: bool = False
    publisher: str = ""
    publisherLock: bool = False
    ageRating: int | None
    ageRatingLock: bool = False
    language: str
    languageLock: bool = False
    genres: list[str]
    genresLock: bool = False
    tags: list[str]
    tagsLock: bool = False
    totalBookCount: int | None = None
    totalBookCountLock: bool = False
    sharingLabels: list[str] = []
    sharingLabelsLock: bool = False
    links: list[WebLinkDto]
    linksLock: bool = False
    created: DateTime
    lastModified: DateTime


class BookMetadataAggregationDto(BaseModel):
    authors: list[AuthorDto]
    tags: list[str] = []
    releaseDate: Day | None
    summary: str = ""
    summaryNumber: str = ""
    created: DateTime
    lastModified: DateTime


class SeriesDto(BaseModel):
    id: str
    libraryId: str
    name: str
    url: str
    created: DateTime
    lastModified: DateTime
    fileLastModified: DateTime
    booksCount: int
    booksReadCount: int
    booksUnreadCount: int
    booksInProgressCount: int
    metadata: SeriesMetadataDto
    booksMetadata: BookMetadataAggregationDto
    deleted: bool = False
    oneshot: bool = False


class MediaDto(BaseModel):
    status: str = "READY"
    mediaType: str = "application/zip"
    pagesCount: int
    comment: str = ""
    epubDivinaCompatible: bool = False
    epubIsKepub: bool = False
    #: Pages of pictures: what Mihon's extension reads (it skips EPUB books).
    mediaProfile: str = "DIVINA"


class ReadProgressDto(BaseModel):
    page: int
    completed: bool
    readDate: DateTime
    created: DateTime
    lastModified: DateTime
    deviceId: str
    deviceName: str


class BookMetadataDto(BaseModel):
    title: str
    titleLock: bool = False
    summary: str = ""
    summaryLock: bool = False
    number: str
    numberLock: bool = False
    numberSort: float
    numberSortLock: bool = False
    releaseDate: Day | None
    releaseDateLock: bool = False
    authors: list[AuthorDto]
    authorsLock: bool = False
    tags: list[str] = []
    tagsLock: bool = False
    isbn: str = ""
    isbnLock: bool = False
    links: list[WebLinkDto]
    linksLock: bool = False
    created: DateTime
    lastModified: DateTime


class BookDto(BaseModel):
    id: str
    seriesId: str
    seriesTitle: str
    libraryId: str
    name: str
    url: str
    number: int
    created: DateTime
    lastModified: DateTime
    fileLastModified: DateTime
    sizeBytes: int = 0
    size: str = "0 B"
    media: MediaDto
    metadata: BookMetadataDto
    readProgress: ReadProgressDto | None
    deleted: bool = False
    fileHash: str = ""
    oneshot: bool = False


class PageDto(BaseModel):
    number: int
    fileName: str
    mediaType: str
    width: int | None = None
    height: int | None = None
    sizeBytes: int | None = None
    size: str = ""


class CollectionDto(BaseModel):
    id: str
    name: str
    ordered: bool = True
    seriesIds: list[str]
    createdDate: DateTime
    lastModifiedDate: DateTime
    filtered: bool = False


class ReadListDto(BaseModel):
    id: str
    name: str
    summary: str
    ordered: bool = True
    bookIds: list[str]
    createdDate: DateTime
    lastModifiedDate: DateTime
    filtered: bool = False


class TachiyomiReadProgressV2Dto(BaseModel):
    booksCount: int
    booksReadCount: int
    booksUnreadCount: int
    booksInProgressCount: int
    lastReadContinuousNumberSort: float
    maxNumberSort: float


class UserDto(BaseModel):
    id: str
    email: str
    roles: list[str]
    sharedAllLibraries: bool = True
    sharedLibrariesIds: list[str] = []
    labelsAllow: list[str] = []
    labelsExclude: list[str] = []


def page_of(
    content: list[T],
    number: int,
    size: int,
    *,
    last: bool,
    total: int | None = None,
    pages: int | None = None,
) -> PageWrapper[T]:
    """Page ``number`` (from 0) of ``size``. Without ``total``, what the pages so far and
    whether more follow imply: one more element (so one more page) while ``last`` is false.
    ``pages``: how many pages there are, when pages of several sources joined hold more than
    ``size`` elements each (else the pages ``total`` fills)."""
    if total is None:
        total = number * size + len(content) + (0 if last else 1)
    return PageWrapper[T](
        content=content,
        pageable=PageableDto(pageNumber=number, pageSize=size, offset=number * size),
        empty=not content,
        first=number == 0,
        last=last,
        number=number,
        numberOfElements=len(content),
        size=size,
        totalElements=total,
        totalPages=pages
        if pages is not None
        else -(-total // size)
        if size
        else int(bool(content)),
    )
