"""Opening what the walk found: a chapter into its index record, and series.json.

This is the only expensive part of a scan, which is why the scanner calls it
just for chapters whose signature changed. A damaged or hostile file never
raises out of here: it becomes a skip reason or a warning for the scan report.
Names on disk fill in whatever ComicInfo.xml leaves out, so an untagged
library still gets sensible titles, numbers and slugs.
"""

import functools
import json
import os
import signal
import stat
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NamedTuple

from toshokan.sdk import partial_md5
from toshokan.sdk.archives import (
    ArchiveError,
    ChapterReader,
    Listing,
    Member,
    UnusualZip,
    archive_kind_of_content,
    open_chapter,
    scan_zip,
)
from toshokan.sdk.names import NameInfo, format_number, parse_chapter_name
from toshokan.sources.local.comicinfo import ComicInfo, MetadataError, parse_comicinfo
from toshokan.sources.local.discovery import FoundChapter, is_inside
from toshokan.sources.local.seriesjson import (
    MAX_SERIES_JSON_BYTES,
    SeriesJson,
    SeriesJsonError,
    parse_series_json,
)
from toshokan.sources.local.slugs import chapter_base_slug

#: Chapter kinds that are books rather than archives: their extension is dropped here.
BOOK_KINDS = ("pdf", "epub")
#: Kinds whose files are told apart by their first bytes when the extension is wrong.
ARCHIVE_KINDS = ("zip", "rar", "7z")


#: What a chapter without a usable ComicInfo.xml says: nothing (only read, never changed).
_NO_COMICINFO = ComicInfo()


class ChapterReading(NamedTuple):
    """The outcome of opening one chapter."""

    #: The row for the ``chapters`` table (without ``series_id``), or None when skipped.
    record: dict[str, Any] | None
    #: Why the chapter was skipped, when ``record`` is None.
    skip_reason: str | None
    #: Problems that did not stop the chapter from being used.
    warnings: list[str]


#: A :class:`ChapterReading`'s fields in a plain tuple, as a reading process sends them back:
#: a plain tuple is unpickled without a call of ``ChapterReading`` for each chapter (two
#: fifths of the scan's time unpickling a batch).
PlainReading = tuple[dict[str, Any] | None, str | None, list[str]]


def real_path(root: Path, relpath: str, plain_folders: set[str] | None = None) -> str:
    """``root/relpath`` with links resolved; ``root`` is already resolved.

    Only the parts under the root can be links the walk did not see, so only they
    are looked at (one lstat each), and the path is resolved in full only when one
    is a link: resolving all of it cost a tenth of a first scan. A vanished file
    or a link loop is left as it is and fails to open, with the reason.
    ``plain_folders`` keeps the folders found to be no link, each looked at once
    for a batch of chapters (which mostly share their series' folder).
    """
    path = str(root)
    *folders, name = relpath.split("/")
    try:
        for part in folders:
            path = f"{path}/{part}"
            if plain_folders is not None and path in plain_folders:
                continue
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return os.path.realpath(os.path.join(root, relpath))
            if plain_folders is not None:
                plain_folders.add(path)
        path = f"{path}/{name}"
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return os.path.realpath(os.path.join(root, relpath))
    except OSError:
        return os.path.join(root, relpath)
    return path


@functools.lru_cache(maxsize=8)
def _inside(root: Path) -> str:
    """What every path inside ``root`` starts with: asked once a chapter, made once."""
    return os.path.join(root, "")


def read_chapter(
    chapter: FoundChapter,
    root: Path,
    *,
    default_language: str,
    comicinfo_limit: int,
    plain_folders: set[str] | None = None,
) -> ChapterReading:
    """Open one chapter and turn its pages and ComicInfo.xml into an index record
    (``plain_folders``: see :func:`real_path`)."""
    real = real_path(root, chapter.relpath, plain_folders)
    if not real.startswith(_inside(root)):
        return ChapterReading(None, "points outside the library root", [])
    kind = chapter.kind
    try:
        listing, digest = _listing(real, kind, root, comicinfo_limit, chapter.sig)
    except ArchiveError as error:
        # A zip named .cbr (or a RAR named .cbz) is common: the bytes say what it is.
        actual = archive_kind_of_content(real) if kind in ARCHIVE_KINDS else None
        if actual is None or actual == kind:
            return ChapterReading(None, f"unreadable chapter: {error}", [])
        kind = actual
        try:
            listing, digest = _listing(real, kind, root, comicinfo_limit)
        except ArchiveError as error:
            return ChapterReading(None, f"unreadable chapter: {error}", [])
    except Exception as error:  # a damaged file must never stop the scan
        return ChapterReading(None, f"unreadable chapter ({type(error).__name__})", [])
    warnings = list(listing.warnings)
    if not listing.pages:
        return ChapterReading(None, "contains no images", warnings)
    info = _NO_COMICINFO
    if listing.comicinfo is not None:
        try:
            info = parse_comicinfo(listing.comicinfo, max_bytes=comicinfo_limit)
        except MetadataError as error:
            warnings.append(f"{error}; using the file name instead")
    record = chapter_record(chapter, listing.pages, info, default_language=default_language)
    record["kind"] = kind
    record["partial_md5"] = digest
    return ChapterReading(record, None, warnings)


def _listing(
    real: str, kind: str, root: Path, comicinfo_limit: int, sig: str = ""
) -> tuple[Listing, str | None]:
    """The chapter's listing and KOReader's id of its file, named while it is open
    (``sig``: the walk's :func:`~toshokan.sources.local.discovery.signature` of it)."""
    if kind == "zip":
        try:
            seen = int(sig.partition(":")[0])  # the size the walk saw, which spares a stat
        except ValueError:
            seen = None
        try:
            return scan_zip(real, comicinfo_limit=comicinfo_limit, size=seen)
        except (UnusualZip, OSError):
            pass  # read by zipfile, whose checks and messages then apply
    try:
        with open_chapter(Path(real), kind, root) as reader:
            listing = reader.listing(comicinfo_limit=comicinfo_limit)
            return listing, _reader_file_id(reader, kind) if listing.pages else None
    except ArchiveError:
        raise
    except Exception as error:  # a damaged file must never stop the scan
        raise ArchiveError(f"cannot be read ({type(error).__name__})") from None


def _reader_file_id(reader: ChapterReader, kind: str) -> str | None:
    if kind == "dir":
        return None
    try:
        return reader.partial_md5()
    except OSError:
        return None


def file_id(path: str, kind: str) -> str | None:
    """KOReader's id of a chapter file (twelve 1 KiB reads); None for an image folder."""
    if kind == "dir":
        return None
    try:
        return partial_md5(path)
    except OSError:
        return None


def serve_batches(
    connection: Connection, root: Path, default_language: str, comicinfo_limit: int
) -> None:
    """A scan's reading process: reads each batch of chapters it is sent and sends back
    their readings (as :data:`PlainReading`; None if reading failed), until the scan closes
    the pipe.

    Ctrl-C reaches the whole process group, and the scan that started the process stops
    it (after committing what was read); the process itself ignores it rather than dying
    mid-batch.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            batch = connection.recv()
        except (EOFError, OSError):
            return
        readings: list[PlainReading] | None
        try:
            readings = [
                (reading.record, reading.skip_reason, reading.warnings)
                for reading in read_chapters(
                    batch, root, default_language=default_language, comicinfo_limit=comicinfo_limit
                )
            ]
        except Exception:
            readings = None
        try:
            connection.send(readings)
        except OSError:  # the scan was stopped
            return


def read_chapters(
    chapters: list[FoundChapter], root: Path, *, default_language: str, comicinfo_limit: int
) -> list[ChapterReading]:
    """:func:`read_chapter` for a batch: what a scan's worker process is handed at once."""
    plain_folders: set[str] = set()
    return [
        read_chapter(
            c,
            root,
            default_language=default_language,
            comicinfo_limit=comicinfo_limit,
            plain_folders=plain_folders,
        )
        for c in chapters
    ]


def chapter_record(
    chapter: FoundChapter, pages: list[Member], info: ComicInfo, *, default_language: str
) -> dict[str, Any]:
    """The ``chapters`` row: ComicInfo.xml where it says something, else the file name."""
    filename = chapter.relpath.rsplit("/", 1)[-1]
    if chapter.kind in BOOK_KINDS:  # the name parser drops only archive extensions
        filename = filename.rsplit(".", 1)[0]
    name = parse_chapter_name(filename)
    number = info.number if info.number is not None else name.number
    volume = info.volume if info.volume is not None else name.volume
    if volume is None:
        volume = _volume_of_folder(chapter.relpath)
    language = (info.language or name.language or default_language).strip() or default_language
    scanlator = info.scanlator or name.group
    title = info.title or name.title or _numbered_title(name, number, volume)
    base = chapter_base_slug(
        number=number,
        volume=volume,
        oneshot=name.oneshot,
        group=scanlator,
        language=language,
        default_language=default_language,
        stem=filename.rsplit(".", 1)[0] if chapter.kind not in ("dir", *BOOK_KINDS) else filename,
    )
    # Chapters sort by number; a volume-only chapter sorts by its volume.
    effective = number if number is not None else (volume if volume is not None else 0.0)
    return {
        "relpath": chapter.relpath,
        "kind": chapter.kind,
        "sig": chapter.sig,
        "base_slug": base,
        "number": float(effective),
        "volume": volume,
        "title": title or "",
        # The release date where ComicInfo gives one; the index completes ``date``
        # with the time the chapter first entered the library (never the mtime).
        "released": info.date.timestamp() if info.date else None,
        "mtime": chapter.mtime,
        "language": language,
        "scanlator": scanlator,
        "web": info.web,
        "pages": _pages_json(tuple([m.name for m in pages])),
        "page_count": len(pages),
        "info": _series_hints(info, name),
    }


def _volume_of_folder(relpath: str) -> float | None:
    """``Series/Vol 01/Ch 1.cbz``: a volume folder inside a series numbers its chapters."""
    parts = relpath.split("/")
    if len(parts) < 3:
        return None
    folder = parse_chapter_name(parts[-2])
    return folder.volume if folder.number is None else None


def _numbered_title(name: NameInfo, number: float | None, volume: float | None) -> str | None:
    """A title made from the numbers, for a chapter that has no title of its own."""
    # The volume is in the title only where the name says it ("v02 c003"): a chapter in a
    # "Vol 02" folder is shown as "Chapter 3", its volume told apart.
    named = name.volume is not None and name.number is not None
    if number is not None and volume is not None and named:
        return f"Vol. {format_number(volume)} Ch. {format_number(number)}"
    if number is not None:
        return "Oneshot" if name.oneshot and number == 0 else f"Chapter {format_number(number)}"
    if volume is not None:
        return f"Volume {format_number(volume)}"
    if name.oneshot:
        return "Oneshot"
    return None


def _series_hints(info: ComicInfo, name: NameInfo) -> str:
    """What this chapter says about its series, kept (as JSON) so the series row can be
    rebuilt from stored chapters without reopening them."""
    summary = info.summary
    hints = (
        info.series,
        info.alternate_series,
        summary,
        tuple(info.writers),
        tuple(info.artists),
        tuple(info.genres),
        tuple(info.tags),
        info.publisher,
        info.year,
        info.age_rating,
        name.series,
        info.manga,
    )
    if summary is not None and len(summary) > _REMEMBERED_SUMMARY:
        return _hints_json.__wrapped__(hints)
    return _hints_json(hints)


def _pages_json(names: tuple[str, ...]) -> str:
    """A chapter's page names as JSON; remembered for the usual chapter, whose names
    (``001.jpg``, ``002.jpg``...) are often those of the chapter read before."""
    if len(names) > _REMEMBERED_PAGES:
        return json.dumps(names)
    return _remembered_pages_json(names)


#: Chapters of up to this many pages have their names' JSON remembered (64 of them), so
#: what is kept stays small.
_REMEMBERED_PAGES = 500


@functools.lru_cache(maxsize=64)
def _remembered_pages_json(names: tuple[str, ...]) -> str:
    return json.dumps(names)


#: The keys of a chapter's series hints, in the order of :func:`_series_hints`'s values.
_HINT_KEYS = (
    "series",
    "alt",
    "summary",
    "writers",
    "artists",
    "genres",
    "tags",
    "publisher",
    "year",
    "age_rating",
    "name_series",
    "manga",
)
#: Hints with a summary up to this long are remembered: the chapters of a series repeat
#: theirs, and a longer summary is not kept in memory for it.
_REMEMBERED_SUMMARY = 2000


@functools.lru_cache(maxsize=64)
def _hints_json(hints: tuple[Any, ...]) -> str:
    """Remembered: the chapters read one after another are mostly a series' own, whose
    hints are the same, and encoding them was a twentieth of reading a chapter."""
    return json.dumps(dict(zip(_HINT_KEYS, hints, strict=True)))


def read_series_json(root: Path, relpath: str) -> SeriesJson:
    """Parse a series folder's series.json; raises SeriesJsonError or OSError when unusable."""
    path = root / relpath
    if not is_inside(path, root):
        raise SeriesJsonError("series.json points outside the library root")
    with path.open("rb") as stream:
        data = stream.read(MAX_SERIES_JSON_BYTES + 1)
    return parse_series_json(data)
