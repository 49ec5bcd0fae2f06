"""Mihon's Komga tracker: how it finds a series' progress on the server and moves it.

Written from mihonapp/mihon (snapshot a2c24ff0),
``app/src/main/java/eu/kanade/tachiyomi/data/track/komga/``:

- ``KomgaModels.kt``: the models below, decoded with the app's ``Json``
  (:mod:`.kotlinx_json`). The tracker's ``SeriesDto`` needs more than the
  extension's (``booksReadCount``, ``booksUnreadCount``,
  ``booksInProgressCount``); ``ReadProgressV2Dto`` reads
  ``lastReadContinuousNumberSort`` as a ``Double`` and ``maxNumberSort`` as a
  ``Float``; the update bodies are ``{"lastBookNumberSortRead": <Double>}``
  for a series and ``{"lastBookRead": <Int>}`` for a read list.
- ``KomgaApi.kt``: ``getTrackSearch(url)`` takes the manga's URL as the
  extension stored it (``<address>/api/v1/series/<id>`` or
  ``/api/v1/readlists/<id>``), GETs it for the title, summary and status, then
  GETs ``<url with /api/v1/series/ turned into /api/v2/series/>/read-progress/tachiyomi``
  (a read list keeps ``/api/v1/readlists/<id>/read-progress/tachiyomi`` and
  its ``ReadProgressDto``, turned into the V2 shape). From that answer:
  ``total_chapters = maxNumberSort.toLong()``; status UNREAD when
  ``booksCount == booksUnreadCount``, else COMPLETED when ``booksCount ==
  booksReadCount``, else READING (in that order); ``last_chapter_read =
  lastReadContinuousNumberSort``; the tracking URL is the manga URL and the
  cover ``<url>/thumbnail``. ``updateProgress`` PUTs the body to the same
  progress URL and reads the track again. Both calls use ``awaitSuccess``.
  Every request carries only ``User-Agent: Mihon v<version> (<app id>)``: no
  credentials, only the cookies the app's jar holds for the URL
  (:class:`~.okhttp_session.MihonNetwork`).
- ``Komga.kt``: statuses UNREAD=1, READING=2, COMPLETED=3; ``update`` moves the
  status to COMPLETED when ``last_chapter_read`` equals a non-zero
  ``total_chapters``, else READING, then calls ``updateProgress``;
  ``match(manga)`` is ``getTrackSearch(manga.url)`` (null on any error);
  ``refresh`` copies the server's progress.

And how the app drives it (``app/src/main/java/eu/kanade/domain/track/interactor/``):

- ``AddTracks.bindEnhancedTrackers``: adding a Komga manga to the library
  matches it, then ``SyncChapterProgressWithTrack.await``: every local chapter
  whose number is at most the server's ``last_chapter_read`` is marked read,
  and the server is sent ``max(server's, the last of the continuously read
  local chapters)``.
- ``TrackChapter.await``: after reading chapter N (when N is above the track's
  ``last_chapter_read``): ``refresh``, then ``update`` with
  ``last_chapter_read = N`` (the chapter's number, a ``Float`` widened to
  ``Double``: chapter 1.1 is sent as 1.100000023841858).

Not in the released tracker: ``KomgaInterceptor`` (Basic on every request)
and page-level sync, which exist only in an unmerged pull request
(mihonapp/mihon#3481, commit d00fe66c).
"""

import json
from dataclasses import dataclass

from .kotlinx_json import (
    KBoolean,
    KDouble,
    KFloat,
    KInt,
    KotlinxModel,
    KString,
    kotlin_double_string,
)
from .okhttp_session import OkHttpClient

UNREAD, READING, COMPLETED = 1, 2, 3
READLIST_API = "/api/v1/readlists"


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


class BookMetadataAggregationDto(KotlinxModel):
    authors: list[AuthorDto] = []
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
    booksReadCount: KInt
    booksUnreadCount: KInt
    booksInProgressCount: KInt
    metadata: SeriesMetadataDto
    booksMetadata: BookMetadataAggregationDto


class ReadListDto(KotlinxModel):
    id: KString
    name: KString
    bookIds: list[KString]
    createdDate: KString
    lastModifiedDate: KString
    filtered: KBoolean


class ReadProgressV2Dto(KotlinxModel):
    booksCount: KInt
    booksReadCount: KInt
    booksUnreadCount: KInt
    booksInProgressCount: KInt
    lastReadContinuousNumberSort: KDouble
    maxNumberSort: KFloat


class ReadProgressDto(KotlinxModel):
    booksCount: KInt
    booksReadCount: KInt
    booksUnreadCount: KInt
    booksInProgressCount: KInt
    lastReadContinuousIndex: KInt

    def to_v2(self) -> ReadProgressV2Dto:
        return ReadProgressV2Dto(
            booksCount=self.booksCount,
            booksReadCount=self.booksReadCount,
            booksUnreadCount=self.booksUnreadCount,
            booksInProgressCount=self.booksInProgressCount,
            lastReadContinuousNumberSort=float(self.lastReadContinuousIndex),
            maxNumberSort=float(self.booksCount),
        )


def progress_url(tracking_url: str) -> str:
    return f"{tracking_url.replace('/api/v1/series/', '/api/v2/series/')}/read-progress/tachiyomi"


def update_body(tracking_url: str, last_chapter_read: float) -> bytes:
    """The PUT body: the V2 form for a series, the read-list form (``toInt()``) otherwise."""
    if "/api/v1/series/" in tracking_url:
        return f'{{"lastBookNumberSortRead":{kotlin_double_string(last_chapter_read)}}}'.encode()
    return json.dumps({"lastBookRead": int(last_chapter_read)}, separators=(",", ":")).encode()


@dataclass
class Track:
    """What Mihon stores of a tracked manga (``TrackSearch`` / ``Track``)."""

    tracking_url: str
    title: str
    cover_url: str
    summary: str = ""
    publishing_status: str = ""
    total_chapters: int = 0
    status: int = 0
    last_chapter_read: float = 0.0


class MihonKomgaTracker:
    """The tracker, over the app's client that shares the extension's cookie jar."""

    def __init__(self, client: OkHttpClient) -> None:
        self.client = client

    async def get_track_search(self, url: str) -> Track:
        """``KomgaApi.getTrackSearch``."""
        answer = await self.client.request("GET", url, check=True)
        if READLIST_API in url:
            readlist = ReadListDto.decode(answer.content)
            track = Track(tracking_url=url, title=readlist.name, cover_url=f"{url}/thumbnail")
        else:
            series = SeriesDto.decode(answer.content)
            track = Track(
                tracking_url=url,
                title=series.metadata.title,
                cover_url=f"{url}/thumbnail",
                summary=series.metadata.summary,
                publishing_status=series.metadata.status,
            )
        progress_answer = await self.client.request("GET", progress_url(url), check=True)
        if "/api/v1/series/" in url:
            progress = ReadProgressV2Dto.decode(progress_answer.content)
        else:
            progress = ReadProgressDto.decode(progress_answer.content).to_v2()
        track.total_chapters = int(progress.maxNumberSort)
        if progress.booksCount == progress.booksUnreadCount:
            track.status = UNREAD
        elif progress.booksCount == progress.booksReadCount:
            track.status = COMPLETED
        else:
            track.status = READING
        track.last_chapter_read = progress.lastReadContinuousNumberSort
        return track

    async def match(self, manga_url: str) -> Track | None:
        """``Komga.match``: the track for a manga of the extension, ``None`` on any failure."""
        try:
            return await self.get_track_search(manga_url)
        except Exception:
            return None

    async def update_progress(self, track: Track) -> Track:
        """``KomgaApi.updateProgress``: PUT the progress, then read the track again."""
        await self.client.request(
            "PUT",
            progress_url(track.tracking_url),
            headers={"Content-Type": "application/json; charset=utf-8"},
            content=update_body(track.tracking_url, track.last_chapter_read),
            check=True,
        )
        return await self.get_track_search(track.tracking_url)

    async def update(self, track: Track, did_read_chapter: bool) -> Track:
        """``Komga.update``."""
        if track.status != COMPLETED and did_read_chapter:
            finished = (
                track.total_chapters > 0 and int(track.last_chapter_read) == track.total_chapters
            )
            track.status = COMPLETED if finished else READING
        return await self.update_progress(track)

    async def chapter_read(self, track: Track, chapter_number: float) -> Track:
        """``TrackChapter.await`` after reading a chapter: refresh, then send its number if it is further."""
        if chapter_number <= track.last_chapter_read:
            return track
        refreshed = await self.get_track_search(track.tracking_url)
        refreshed.last_chapter_read = chapter_number
        return await self.update(refreshed, did_read_chapter=True)

    async def bind(
        self, manga_url: str, local_chapters: dict[float, bool]
    ) -> tuple[Track, dict[float, bool]] | None:
        """``bindEnhancedTrackers`` + ``SyncChapterProgressWithTrack``.

        ``local_chapters`` maps each chapter number to whether it is read in the
        app; the answer is the track and the chapters as the app then marks them
        (numbers below 0 are "unrecognised" and left alone). Where the app logs a
        failed update and leaves its chapters as they were, this raises.
        """
        track = await self.match(manga_url)
        if track is None:
            return None
        numbers = sorted(number for number in local_chapters if number >= 0)
        synced = {
            number: read or 0 <= number <= track.last_chapter_read
            for number, read in local_chapters.items()
        }
        local_last = 0.0
        for number in numbers:
            if not local_chapters[number]:
                break
            local_last = number
        track.last_chapter_read = max(track.last_chapter_read, local_last)
        return await self.update(track, did_read_chapter=False), synced
