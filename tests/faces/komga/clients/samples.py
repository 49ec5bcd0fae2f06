"""Answers shaped the way Komga writes them, field for field, for the decoders' own tests.

Built from Komga's DTOs (gotson/komga ``komga/src/main/kotlin/org/gotson/komga/interfaces/api/rest/dto/``,
see :mod:`.komga_dtos`) and Spring Data's ``PageImpl`` as Jackson writes it;
the values are made up. Each call returns a fresh copy a test may change.
"""

import copy
from typing import Any

_AUTHORS = [
    {"name": "Tsutomu Nihei", "role": "writer"},
    {"name": "Tsutomu Nihei", "role": "penciller"},
    {"name": "Scan Group", "role": "translator"},
]

_SERIES: dict[str, Any] = {
    "id": "0B6ZGKT1FQZ3M",
    "libraryId": "0B6ZGK9RZB4X8",
    "name": "Blame!",
    "url": "/comics/Blame!",
    "created": "2024-03-01T10:15:30Z",
    "lastModified": "2024-03-02T08:00:00Z",
    "fileLastModified": "2023-12-24T18:30:00Z",
    "booksCount": 3,
    "booksReadCount": 1,
    "booksUnreadCount": 1,
    "booksInProgressCount": 1,
    "metadata": {
        "status": "ENDED",
        "statusLock": False,
        "title": "Blame!",
        "titleLock": False,
        "titleSort": "Blame!",
        "titleSortLock": False,
        "summary": "Killy wanders the City.",
        "summaryLock": False,
        "readingDirection": "RIGHT_TO_LEFT",
        "readingDirectionLock": False,
        "publisher": "Kodansha",
        "publisherLock": False,
        "ageRating": 16,
        "ageRatingLock": False,
        "language": "en",
        "languageLock": False,
        "genres": ["Sci-Fi", "Action"],
        "genresLock": False,
        "tags": ["cyberpunk"],
        "tagsLock": False,
        "totalBookCount": 10,
        "totalBookCountLock": False,
        "sharingLabels": [],
        "sharingLabelsLock": False,
        "links": [{"label": "MangaDex", "url": "https://mangadex.org/title/blame"}],
        "linksLock": False,
        "alternateTitles": [{"label": "Japanese", "title": "ブラム"}],
        "alternateTitlesLock": False,
        "created": "2024-03-01T10:15:30Z",
        "lastModified": "2024-03-02T08:00:00Z",
    },
    "booksMetadata": {
        "authors": _AUTHORS,
        "tags": ["dystopia"],
        "releaseDate": "1997-07-23",
        "summary": "",
        "summaryNumber": "",
        "created": "2024-03-01T10:15:30Z",
        "lastModified": "2024-03-02T08:00:00Z",
    },
    "deleted": False,
    "oneshot": False,
}

_BOOK: dict[str, Any] = {
    "id": "0B6ZGM2Q1V7RW",
    "seriesId": "0B6ZGKT1FQZ3M",
    "seriesTitle": "Blame!",
    "libraryId": "0B6ZGK9RZB4X8",
    "name": "Blame! v01",
    "url": "/comics/Blame!/Blame! v01.cbz",
    "number": 1,
    "created": "2024-03-01T10:15:31Z",
    "lastModified": "2024-03-01T10:15:31Z",
    "fileLastModified": "2023-12-24T18:30:00Z",
    "sizeBytes": 24321456,
    "size": "23.2 MiB",
    "media": {
        "status": "READY",
        "mediaType": "application/zip",
        "pagesCount": 5,
        "comment": "",
        "epubDivinaCompatible": False,
        "epubIsKepub": False,
        "mediaProfile": "DIVINA",
    },
    "metadata": {
        "title": "Net Sphere",
        "titleLock": False,
        "summary": "",
        "summaryLock": False,
        "number": "1",
        "numberLock": False,
        "numberSort": 1.0,
        "numberSortLock": False,
        "releaseDate": "1997-07-23",
        "releaseDateLock": False,
        "authors": _AUTHORS,
        "authorsLock": False,
        "tags": [],
        "tagsLock": False,
        "isbn": "",
        "isbnLock": False,
        "links": [],
        "linksLock": False,
        "created": "2024-03-01T10:15:31Z",
        "lastModified": "2024-03-01T10:15:31Z",
    },
    "readProgress": {
        "page": 3,
        "completed": False,
        "readDate": "2024-03-05T21:00:00Z",
        "created": "2024-03-05T20:40:00Z",
        "lastModified": "2024-03-05T21:00:00Z",
        "deviceId": "",
        "deviceName": "",
    },
    "deleted": False,
    "fileHash": "",
    "oneshot": False,
}

_COLLECTION: dict[str, Any] = {
    "id": "0B6ZGQ8X3N5AA",
    "name": "Nihei",
    "ordered": False,
    "seriesIds": ["0B6ZGKT1FQZ3M"],
    "createdDate": "2024-03-01T10:16:00Z",
    "lastModifiedDate": "2024-03-01T10:16:00Z",
    "filtered": False,
}

_READLIST: dict[str, Any] = {
    "id": "0B6ZGR1T4K2BB",
    "name": "Start here",
    "summary": "",
    "ordered": True,
    "bookIds": ["0B6ZGM2Q1V7RW"],
    "createdDate": "2024-03-01T10:17:00Z",
    "lastModifiedDate": "2024-03-01T10:17:00Z",
    "filtered": False,
}

_LIBRARY: dict[str, Any] = {
    "id": "0B6ZGK9RZB4X8",
    "name": "Manga",
    "root": "",
    "importComicInfoBook": True,
    "importComicInfoSeries": True,
    "importComicInfoCollection": True,
    "importComicInfoReadList": True,
    "importComicInfoSeriesAppendVolume": True,
    "importEpubBook": True,
    "importEpubSeries": True,
    "importMylarSeries": True,
    "importLocalArtwork": True,
    "importBarcodeIsbn": False,
    "scanForceModifiedTime": False,
    "scanInterval": "EVERY_6H",
    "scanOnStartup": False,
    "scanCbx": True,
    "scanPdf": True,
    "scanEpub": True,
    "scanDirectoryExclusions": ["#recycle", "@eaDir", "@Recycle"],
    "repairExtensions": False,
    "convertToCbz": False,
    "emptyTrashAfterScan": False,
    "seriesCover": "FIRST",
    "hashFiles": True,
    "hashPages": False,
    "hashKoreader": False,
    "analyzeDimensions": True,
    "oneshotsDirectory": None,
    "unavailable": False,
}


def series() -> dict[str, Any]:
    return copy.deepcopy(_SERIES)


def book(**changes: Any) -> dict[str, Any]:
    answer = copy.deepcopy(_BOOK)
    answer.update(changes)
    return answer


def collection() -> dict[str, Any]:
    return copy.deepcopy(_COLLECTION)


def readlist() -> dict[str, Any]:
    return copy.deepcopy(_READLIST)


def library() -> dict[str, Any]:
    return copy.deepcopy(_LIBRARY)


def pages() -> list[dict[str, Any]]:
    return [
        {
            "number": 1,
            "fileName": "001.jpg",
            "mediaType": "image/jpeg",
            "width": 800,
            "height": 1200,
            "sizeBytes": 204800,
            "size": "200 KiB",
        },
        {
            "number": 2,
            "fileName": "002.tiff",
            "mediaType": "image/tiff",
            "width": None,
            "height": None,
            "sizeBytes": None,
            "size": "",
        },
    ]


def tachiyomi_progress_v2() -> dict[str, Any]:
    return {
        "booksCount": 3,
        "booksReadCount": 1,
        "booksUnreadCount": 1,
        "booksInProgressCount": 1,
        "lastReadContinuousNumberSort": 1.0,
        "maxNumberSort": 3.0,
    }


def _sort(sorted_: bool) -> dict[str, bool]:
    return {"empty": not sorted_, "sorted": sorted_, "unsorted": not sorted_}


def page_of(
    content: list[Any],
    *,
    number: int = 0,
    size: int = 20,
    total: int | None = None,
    sorted_: bool = False,
) -> dict[str, Any]:
    """Spring Data's ``PageImpl`` as Jackson writes it (Komga answers ``unpaged=true`` as one page of ``max(count, 20)``)."""
    total = len(content) if total is None else total
    pages_total = -(-total // size) if size else 1
    return {
        "content": content,
        "pageable": {
            "pageNumber": number,
            "pageSize": size,
            "sort": _sort(sorted_),
            "offset": number * size,
            "paged": True,
            "unpaged": False,
        },
        "last": number + 1 >= pages_total,
        "totalElements": total,
        "totalPages": pages_total,
        "size": size,
        "number": number,
        "sort": _sort(sorted_),
        "first": number == 0,
        "numberOfElements": len(content),
        "empty": not content,
    }
