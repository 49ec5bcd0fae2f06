"""Writing kept chapters into the keep folder: whole, or not at all.

A chapter is written aside first, in ``<folder>/.toshokan-keep/<draft>/``: in
the same file system as the library (so the last step is one ``rename``), and
under a dot-folder, which the local library's scans and watcher never read.
Each page is streamed to its own file as it arrives, bounded in bytes, then
checked (:mod:`.pages`); the CBZ is put together from those files, page by page
(never the whole chapter in memory), with its ComicInfo.xml, flushed to disk
(``fsync``), and only then renamed into the series folder, whose entry is
flushed too. A reader, a scan or another replica sees the chapter complete or
not at all.

A process killed meanwhile leaves only its draft folder, which is no part of the
library: the next :class:`Shelf` to start removes drafts nobody holds (each
draft holds a lock on its folder while it lives), and the chapter written again
takes the same name, replacing nothing but itself. A full disk, a file size
limit or a folder that cannot be written are :class:`~.errors.NoSpace` and
:class:`~.errors.NotWritable`, raised before anything in the library changed.
"""

import asyncio
import contextlib
import errno
import fcntl
import os
import shutil
import uuid
import zipfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from toshokan.core.keeping.errors import BadImage, KeepError, NoSpace, NotWritable, TooLarge
from toshokan.core.keeping.metadata import PageInfo
from toshokan.core.keeping.pages import check_page
from toshokan.sdk.digests import partial_md5

#: The keep folder's working space, hidden from the library.
DRAFTS = ".toshokan-keep"
#: Bytes gathered from an upstream before they are written (one write per this much).
WRITE_CHUNK = 1024 * 1024
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_REFUSED = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


@dataclass(frozen=True)
class Bounds:
    """What one kept page and one kept chapter may weigh."""

    image_bytes: int
    chapter_bytes: int
    image_pixels: int


@dataclass(frozen=True)
class Staged:
    """A chapter's CBZ written aside and flushed: its KOReader id, bytes and pages."""

    path: Path
    document: str
    size: int
    pages: int


def disk_error(error: OSError, doing: str) -> KeepError:
    """An operating system's refusal as the error the queue acts on."""
    what = os.strerror(error.errno) if error.errno else type(error).__name__
    if error.errno in _FULL:
        return NoSpace(f"the keep folder is full while {doing} ({what})")
    if error.errno in _REFUSED:
        return NotWritable(f"the keep folder cannot be written while {doing} ({what})")
    return KeepError(f"the keep folder failed while {doing} ({what})")


@contextlib.contextmanager
def writing(doing: str) -> Iterator[None]:
    try:
        yield
    except OSError as error:
        raise disk_error(error, doing) from None


def _fsync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class Shelf:
    """The keep folder: kept series and chapters are written here, whole or not at all."""

    def __init__(self, folder: Path, bounds: Bounds):
        self.folder = folder
        self.bounds = bounds
        self.drafts = folder / DRAFTS

    def clean(self) -> int:
        """Remove drafts of processes that died mid-chapter; how many. Blocking."""
        removed = 0
        with contextlib.suppress(FileNotFoundError):
            for draft in self.drafts.iterdir():
                lock = _try_lock(draft)
                if lock is None:
                    continue  # a live process is writing it
                try:
                    shutil.rmtree(draft, ignore_errors=True)
                    removed += 1
                finally:
                    os.close(lock)
        return removed

    @contextlib.asynccontextmanager
    async def draft(self) -> AsyncIterator["Draft"]:
        """A chapter being written aside; removed on leaving, whatever happened."""
        draft = await asyncio.to_thread(Draft.open, self)
        try:
            yield draft
        finally:
            await asyncio.to_thread(draft.close)

    async def place(self, relative: str, data: bytes) -> bool:
        """Write a small file (a series' cover or series.json) into place atomically, unless
        it holds these bytes already; whether it was written."""
        return await asyncio.to_thread(self._place, relative, data)

    def _place(self, relative: str, data: bytes) -> bool:
        target = self.folder / relative
        with contextlib.suppress(OSError):
            if target.stat().st_size == len(data) and target.read_bytes() == data:
                return False
        with writing(f"writing {relative}"):
            self.drafts.mkdir(exist_ok=True)
            aside = self.drafts / f"{uuid.uuid4().hex}.part"
            try:
                with aside.open("wb") as out:
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
                target.parent.mkdir(exist_ok=True)
                os.replace(aside, target)
            finally:
                aside.unlink(missing_ok=True)
            _fsync_folder(target.parent)
        return True


def _try_lock(folder: Path) -> int | None:
    """A held lock on ``folder``'s draft, or None when another process holds it."""
    try:
        descriptor = os.open(folder / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        return None
    return descriptor


class Draft:
    """One chapter being written aside: pages added in reading order, then the CBZ."""

    def __init__(self, shelf: Shelf, folder: Path, lock: int):
        self.shelf = shelf
        self.folder = folder
        self._lock = lock
        self.pages: list[PageInfo] = []
        self._files: list[tuple[Path, str]] = []
        self.size = 0

    @classmethod
    def open(cls, shelf: Shelf) -> "Draft":
        with writing("starting a chapter"):
            shelf.drafts.mkdir(exist_ok=True)
            folder = shelf.drafts / uuid.uuid4().hex
            folder.mkdir()
            lock = _try_lock(folder)
            if lock is None:
                raise NotWritable("the keep folder's drafts cannot be locked")
        return cls(shelf, folder, lock)

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        os.close(self._lock)

    async def add_page(self, chunks: AsyncIterator[bytes]) -> PageInfo:
        """The next page, from its bytes as they arrive: written aside, bounded, then checked."""
        bounds = self.shelf.bounds
        path = self.folder / f"page-{len(self._files) + 1:05d}"
        size = 0
        pending = bytearray()
        with writing("writing a page"):
            out = await asyncio.to_thread(path.open, "wb")
            try:
                async for chunk in chunks:
                    size += len(chunk)
                    if size > bounds.image_bytes:
                        raise BadImage(
                            f"a page is larger than {bounds.image_bytes // (1024 * 1024)} MiB"
                        )
                    if self.size + size > bounds.chapter_bytes:
                        raise TooLarge(
                            f"the chapter is larger than {bounds.chapter_bytes // (1024 * 1024)} MiB"
                        )
                    pending += chunk
                    if len(pending) >= WRITE_CHUNK:
                        await asyncio.to_thread(out.write, bytes(pending))
                        pending.clear()
                await asyncio.to_thread(out.write, bytes(pending))
            finally:
                await asyncio.to_thread(out.close)
        if not size:
            raise BadImage("a page came empty")
        info, extension = await asyncio.to_thread(
            check_page, path, size, max_pixels=bounds.image_pixels
        )
        self.size += size
        self._files.append((path, extension))
        self.pages.append(info)
        return info

    def named_pages(self) -> list[PageInfo]:
        """The pages under the names they take in the archive: numbers that sort, in order."""
        width = max(3, len(str(len(self._files))))
        return [
            replace(info, name=f"{index:0{width}d}{extension}")
            for index, (info, (_, extension)) in enumerate(
                zip(self.pages, self._files, strict=True), start=1
            )
        ]

    async def assemble(self, comicinfo: bytes) -> Staged:
        """The CBZ of the pages added, with ``comicinfo``, written aside and flushed."""
        return await asyncio.to_thread(self._assemble, comicinfo)

    def _assemble(self, comicinfo: bytes) -> Staged:
        if not self._files:
            raise BadImage("the chapter has no pages")
        path = self.folder / "chapter.cbz"
        with writing("writing a chapter"):
            # Stored, not compressed: the pages are compressed images already, kept as sent.
            with path.open("wb") as out:
                with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
                    for info, (page, _) in zip(self.named_pages(), self._files, strict=True):
                        archive.write(page, info.name)
                    archive.writestr("ComicInfo.xml", comicinfo, zipfile.ZIP_DEFLATED)
                out.flush()
                os.fsync(out.fileno())
            size = path.stat().st_size
        return Staged(path, partial_md5(str(path)), size, len(self._files))

    async def publish_page(self, relative_stem: str) -> str:
        """Move the first page into place as ``relative_stem`` with its extension (a series'
        cover); the relative path it took."""
        (page, extension), *_ = self._files
        relative = f"{relative_stem}{extension}"
        staged = Staged(page, "", self.pages[0].size, 1)
        await self.publish(staged, relative)
        return relative

    async def publish(self, staged: Staged, relative: str) -> Path:
        """Move the chapter into place under the keep folder, in one rename; its path."""
        return await asyncio.to_thread(self._publish, staged, relative)

    def _publish(self, staged: Staged, relative: str) -> Path:
        target = self.shelf.folder / relative
        with writing("moving a chapter into place"):
            if not target.parent.exists():
                target.parent.mkdir()
                _fsync_folder(target.parent.parent)
            os.replace(staged.path, target)
            _fsync_folder(target.parent)
        return target
