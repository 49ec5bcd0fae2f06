"""Books without page streaming: downloaded once, kept on disk under a size cap, read by page.

The download is streamed to disk (never whole in memory) and refused past
``max_archive_mb``; the cache directory is kept under ``archive_cache_mb`` by
dropping the least recently used books. One download per book at a time:
concurrent readers of a book wait for the first one's download. Pages are
read with the readers every adapter shares (:mod:`toshokan.sdk.archives`):
comic archives, PDFs (pages rendered once into ``renders``, a capped disk
cache) and EPUBs of page images (a fixed-layout comic), in spine order.

A book's last use is its file's access time, set when it is read: its
modification time stays the download's, because rendered PDF pages are kept
under a key that includes it.
"""

import asyncio
import hashlib
import os
import time
import zipfile
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path

from toshokan.sdk import UpstreamError, archives
from toshokan.sdk.names import media_type
from toshokan.sources.opds.feed import Acquisition

#: Media types of downloads that can be read page by page, best first.
READABLE = (
    "application/vnd.comicbook+zip",
    "application/x-cbz",
    "application/zip",
    "application/vnd.comicbook-rar",
    "application/x-cbr",
    "application/x-rar-compressed",
    "application/vnd.rar",
    "application/x-cb7",
    "application/x-7z-compressed",
    # Rendered, every page of a PDF is an image; an EPUB has pages only when it shows images.
    "application/pdf",
    "application/epub+zip",
)
_MAGIC = (
    (b"PK\x03\x04", "zip"),
    (b"Rar!\x1a\x07", "rar"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"%PDF-", "pdf"),
)
_EPUB_MIMETYPE = b"application/epub+zip"
#: A ``mimetype`` entry longer than this is not an EPUB's.
_MAX_MIMETYPE_BYTES = 64

Download = Callable[[str, Path, int], Awaitable[int]]


def readable(acquisitions: list[Acquisition]) -> Acquisition | None:
    """The download to read pages from: a comic archive if there is one, else whatever is offered."""

    def rank(acquisition: Acquisition) -> int:
        kind = acquisition.media_type.split(";")[0].strip()
        return READABLE.index(kind) if kind in READABLE else len(READABLE)

    ranked = sorted(acquisitions, key=rank)
    return ranked[0] if ranked else None


def _kind(path: Path) -> str | None:
    """What the downloaded file is, by its content: catalogues often label downloads loosely."""
    with path.open("rb") as handle:
        head = handle.read(8)
    kind = next((kind for magic, kind in _MAGIC if head.startswith(magic)), None)
    return "epub" if kind == "zip" and _is_epub(path) else kind


def _is_epub(path: Path) -> bool:
    """A zip whose ``mimetype`` entry says EPUB (its pages are in spine order, not by name)."""
    try:
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo("mimetype")
            if info.file_size > _MAX_MIMETYPE_BYTES:
                return False
            return archive.read(info).strip() == _EPUB_MIMETYPE
    except (KeyError, zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError):
        return False


class ArchiveCache:
    def __init__(
        self,
        folder: Path,
        *,
        capacity: int,
        max_file: int,
        renders: archives.DiskCache | None = None,
    ):
        self.folder = folder
        self.capacity = capacity
        self.max_file = max_file
        self.renders = renders
        self._locks: dict[str, asyncio.Lock] = {}
        self._listings: OrderedDict[Path, tuple[str, list[archives.Member]]] = OrderedDict()

    def _path(self, url: str) -> Path:
        return self.folder / hashlib.sha256(url.encode()).hexdigest()[:40]

    async def pages(self, url: str, download: Download) -> list[archives.Member]:
        """The page images of the book at ``url``, in reading order (``download`` it if needed:
        ``download(url, dest, max_bytes)`` with the credentials of whoever asked)."""
        path = await self._fetch(url, download)
        return (await self._listing(path))[1]

    async def page(self, url: str, number: int, download: Download) -> tuple[bytes, str]:
        """Page ``number`` (1-based) as bytes and media type; BMP and TIFF pages become PNG."""
        for attempt in range(2):
            path = await self._fetch(url, download)
            kind, members = await self._listing(path)
            if not 1 <= number <= len(members):
                raise IndexError(number)
            member = members[number - 1]

            def read(
                path: Path = path, kind: str = kind, name: str = member.name
            ) -> tuple[bytes, str]:
                with self._open(path, kind) as reader:
                    data = reader.read(name, archives.MAX_PAGE_BYTES)
                return archives.displayable(data, media_type(name))

            try:
                return await asyncio.to_thread(read)
            except (FileNotFoundError, archives.ArchiveError) as error:
                # Dropped to make room for another book between fetch and read: fetch it again.
                if attempt or path.exists():
                    raise UpstreamError(f"The downloaded book cannot be read: {error}.") from None
        raise AssertionError("unreachable: the second attempt returns or raises")

    async def _fetch(self, url: str, download: Download) -> Path:
        path = self._path(url)
        lock = self._locks.setdefault(path.name, asyncio.Lock())
        async with lock:
            if path.exists():
                os.utime(path, ns=(time.time_ns(), path.stat().st_mtime_ns))
                return path
            self.folder.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(".part")
            size = await download(url, partial, self.max_file)
            await asyncio.to_thread(self._make_room, size)
            partial.replace(path)
        if len(self._locks) > 1024:
            self._locks = {name: lk for name, lk in self._locks.items() if lk.locked()}
        return path

    def _make_room(self, incoming: int) -> None:
        """Drop least recently used books until ``incoming`` more bytes fit under the cap."""
        books = [p for p in self.folder.iterdir() if p.is_file() and p.suffix != ".part"]
        stats = sorted((p.stat().st_atime, p.stat().st_size, p) for p in books)
        total = sum(size for _, size, _ in stats)
        for _, size, stale in stats:
            if total + incoming <= self.capacity:
                break
            stale.unlink(missing_ok=True)
            self._listings.pop(stale, None)
            total -= size

    def _open(self, path: Path, kind: str) -> archives.ChapterReader:
        return archives.open_chapter(path, kind, path.parent, renders=self.renders)

    async def _listing(self, path: Path) -> tuple[str, list[archives.Member]]:
        known = self._listings.get(path)
        if known is not None:
            self._listings.move_to_end(path)
            return known

        def scan() -> tuple[str, list[archives.Member]]:
            kind = _kind(path)
            if kind is None:
                raise archives.ArchiveError("it is not a CBZ, CBR, CB7, PDF or EPUB file")
            with self._open(path, kind) as reader:
                pages = reader.listing(comicinfo_limit=0).pages
            if not pages:
                raise archives.ArchiveError("it has no page images (an EPUB of text?)")
            return kind, pages

        try:
            listing = await asyncio.to_thread(scan)
        except archives.ArchiveError as error:
            raise UpstreamError(f"The downloaded book cannot be read: {error}.") from None
        self._listings[path] = listing
        while len(self._listings) > 256:
            self._listings.popitem(last=False)
        return listing
