"""Opening a chapter: the reader its kind needs, with 7z and RAR directories kept."""

from pathlib import Path

from toshokan.sdk.archives.base import ArchiveError, ChapterReader
from toshokan.sdk.archives.directories import IdleReaders
from toshokan.sdk.archives.diskcache import DiskCache
from toshokan.sdk.archives.epub import EpubReader
from toshokan.sdk.archives.folder import FolderReader
from toshokan.sdk.archives.pdf import PdfReader
from toshokan.sdk.archives.rar import RarReader
from toshokan.sdk.archives.sevenzip import SevenZipReader
from toshokan.sdk.archives.zips import ZipReader

#: 7z and RAR readers between requests, process-wide: whoever opens a chapter (the page
#: route, thumbnails, a scan) gets one whose directory is already parsed when one is idle.
#: Zip archives have their own :class:`~toshokan.sdk.archives.directories.ZipDirectoryCache`,
#: whose one reader serves many threads at once.
IDLE_READERS = IdleReaders()


def open_chapter(
    path: Path, kind: str, root: Path, *, renders: DiskCache | None = None
) -> ChapterReader:
    """Open a chapter container of ``kind`` (``zip``, ``7z``, ``rar``, ``pdf``, ``epub``, ``dir``).

    ``renders`` keeps rendered PDF pages, when given."""
    try:
        if kind == "zip":
            return ZipReader(path)
        if kind == "7z":
            return IDLE_READERS.open(path, SevenZipReader)
        if kind == "rar":
            return IDLE_READERS.open(path, RarReader)
        if kind == "dir":
            return FolderReader(path, root)
        if kind == "pdf":
            return PdfReader(path, renders)
        if kind == "epub":
            return EpubReader(path)
    except ArchiveError:
        raise
    except OSError as error:
        raise ArchiveError(f"cannot be opened ({error.strerror})") from None
    raise ArchiveError(f"unknown chapter kind {kind!r}")
