"""The host's works, chapters and places as Komga's series, books and read progress.

A series is a work; a book is one chapter (one per version: groups and
languages are separate books with the same number); ``metadata.numberSort``
is the chapter number and ``number`` its place in the series, counted from 1
in reading order as Komga counts. The scanlator is the book's ``translator``,
the role Mihon's extension shows as the chapter's scanlator. Pages count from
1 here and from 0 in the progress store.
"""

from datetime import UTC, datetime

from toshokan.core.progress import ChapterRef, Position
from toshokan.faces.komga.dto import (
    AlternateTitleDto,
    AuthorDto,
    BookDto,
    BookMetadataAggregationDto,
    BookMetadataDto,
    MediaDto,
    ReadProgressDto,
    SeriesDto,
    SeriesMetadataDto,
    WebLinkDto,
)
from toshokan.faces.komga.ids import book_id, library_id, series_id
from toshokan.models import Chapter, Manga, SourceConfiguration
from toshokan.models.content import EPOCH, Classification, Entry, Publication

#: Komga's statuses; a work of unknown status is ONGOING, Komga's own default for a series.
STATUS = {
    Publication.ONGOING: "ONGOING",
    Publication.COMPLETED: "ENDED",
    Publication.CANCELLED: "ABANDONED",
    Publication.HIATUS: "HIATUS",
}
#: Komga's age rating is an age; the spec's classification, the least age it suits.
#: How the work reads, in Komga's words (its WEBTOON is a continuous vertical strip).
READING_DIRECTION = {"ltr": "LEFT_TO_RIGHT", "rtl": "RIGHT_TO_LEFT", "vertical": "WEBTOON"}

AGE_RATING = {
    Classification.SUGGESTIVE: 16,
    Classification.EXPLICIT: 18,
    Classification.PORNOGRAPHIC: 18,
}


def _tag_names(config: SourceConfiguration, slugs: list[str]) -> list[str]:
    names = {tag.slug: tag.name for tag in config.search.tags}
    return [names.get(slug, slug) for slug in slugs]


def _sort_title(title: str) -> str:
    return title.casefold()


def series_of_entry(
    source: str,
    entry: Entry,
    config: SourceConfiguration,
    chapters: list[Chapter] | None = None,
    places: dict[str, Position] | None = None,
) -> SeriesDto:
    """A search result as a series: its details when the source had them, else its title;
    its books counted when the listing has its chapters."""
    work = entry.details or Manga(slug=entry.slug, url="", title=entry.title)
    return series_of_manga(source, work, config, chapters or [], places or {})


def _counts(chapters: list[Chapter], places: dict[str, Position]) -> tuple[int, int]:
    """How many of the chapters the reader finished, and how many they started only."""
    found = [p for c in chapters if (p := places.get(c.slug)) is not None]
    read = sum(1 for p in found if p.finished)
    return read, len(found) - read


def read_status(chapters: list[Chapter], places: dict[str, Position]) -> str:
    """Komga's read status of a series: UNREAD when no book is read or started, READ when every
    book is read, IN_PROGRESS otherwise (a series without books is UNREAD)."""
    read, started = _counts(chapters, places)
    if read == 0 and started == 0:
        return "UNREAD"
    return "READ" if read == len(chapters) else "IN_PROGRESS"


def series_of_manga(
    source: str,
    work: Manga,
    config: SourceConfiguration,
    chapters: list[Chapter],
    places: dict[str, Position],
) -> SeriesDto:
    read, started = _counts(chapters, places)
    created, modified = work.createdAt, max(work.updatedAt, work.createdAt)
    if chapters:
        modified = max(modified, *(c.date for c in chapters))
    authors = [AuthorDto(name=name, role="writer") for name in work.authors]
    genres = _tag_names(config, work.tags)
    metadata = SeriesMetadataDto(
        status=STATUS.get(work.publication, "ONGOING"),
        title=work.title,
        titleSort=_sort_title(work.title),
        alternateTitles=[
            AlternateTitleDto(label="", title=title) for title in work.alternativeTitles
        ],
        summary=work.synopsis,
        readingDirection=READING_DIRECTION.get(work.readingDirection or "", ""),
        ageRating=AGE_RATING.get(work.classification),
        language=config.languages[0],
        genres=genres,
        tags=[],
        links=[WebLinkDto(label=config.name, url=work.url)] if work.url else [],
        created=created,
        lastModified=modified,
    )
    releases = [c.date for c in chapters if c.date != EPOCH]
    aggregation = BookMetadataAggregationDto(
        authors=authors,
        releaseDate=min(releases).date() if releases else None,
        summary="",
        created=created,
        lastModified=modified,
    )
    identifier = series_id(source, work.slug)
    return SeriesDto(
        id=identifier,
        libraryId=library_id(source),
        name=work.title,
        url=work.url,
        created=created,
        lastModified=modified,
        fileLastModified=modified,
        booksCount=len(chapters),
        booksReadCount=read,
        booksUnreadCount=len(chapters) - read - started,
        booksInProgressCount=started,
        metadata=metadata,
        booksMetadata=aggregation,
    )


def reading_order(chapters: list[Chapter]) -> list[Chapter]:
    """Chapters as Komga lists a series' books: by number, first first (versions by date)."""
    return sorted(chapters, key=lambda c: (c.number, c.date, c.slug))


def _number_text(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def read_progress(place: Position | None) -> ReadProgressDto | None:
    if place is None:
        return None
    moment = datetime.fromtimestamp(place.updated, UTC)
    return ReadProgressDto(
        page=min(place.page + 1, max(place.pages, 1)),
        completed=place.finished,
        readDate=moment,
        created=moment,
        lastModified=moment,
        deviceId=place.device_id,
        deviceName=place.device,
    )


def book_of_chapter(
    ref: ChapterRef,
    chapter: Chapter,
    place: int,
    work_title: str,
    pages: int | None,
    progress: Position | None,
) -> BookDto:
    """A chapter as a book; ``place`` is its number in the series (from 1), ``pages`` its page
    count when known (otherwise what the reader's place recorded, or 0)."""
    count = pages or chapter.pages or (progress.pages if progress is not None else 0)
    moment = chapter.date
    metadata = BookMetadataDto(
        title=chapter.title,
        number=_number_text(chapter.number),
        numberSort=float(chapter.number),
        releaseDate=moment.date() if moment != EPOCH else None,
        authors=[AuthorDto(name=chapter.scanlator, role="translator")],
        links=[WebLinkDto(label=chapter.scanlator, url=chapter.url)] if chapter.url else [],
        created=moment,
        lastModified=moment,
    )
    return BookDto(
        id=book_id(ref),
        seriesId=series_id(ref.source, ref.manga),
        seriesTitle=work_title,
        libraryId=library_id(ref.source),
        name=chapter.title,
        url=chapter.url,
        number=place,
        created=moment,
        lastModified=moment,
        fileLastModified=moment,
        media=MediaDto(pagesCount=count),
        metadata=metadata,
        readProgress=read_progress(progress),
    )
