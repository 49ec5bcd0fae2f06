"""Archives kept open between requests, so that a page does not reread its directory.

A chapter's directory can hold 100,000 entries; reading it for every page made
each page cost the whole directory. Both caches key an archive by its path,
size and modification time, so an archive changed on disk is reopened, and
both are bounded in archives and in directory entries (each costs memory),
least recently used leaving first.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

from toshokan.sdk.archives.base import ChapterReader
from toshokan.sdk.archives.zips import ZipReader


class ZipDirectoryCache:
    """Open zip archives kept by path and signature, so a page does not reread the directory.

    A chapter's zip directory can hold 100,000 entries; reading it for every page
    made each page cost the whole directory. The cache holds at most ``capacity``
    archives and ``max_entries`` directory entries in all (each costs memory),
    least recently used leaving first. Archives changed on disk are reopened,
    because the key includes their size and modification time.
    """

    def __init__(self, capacity: int = 32, max_entries: int = 200_000):
        self.capacity = capacity
        self.max_entries = max_entries
        self._readers: OrderedDict[tuple[str, int, int], ZipReader] = OrderedDict()
        self._entries = 0
        self._lock = threading.Lock()

    def open(self, path: Path, size: int, mtime_ns: int) -> ZipReader:
        key = (str(path), size, mtime_ns)
        with self._lock:
            reader = self._readers.get(key)
            if reader is not None:
                self._readers.move_to_end(key)
                return reader
        reader = ZipReader(path, shared=True)
        if reader.entries > self.max_entries:
            reader.shared = False  # too big to keep: the caller's close() releases it
            return reader
        with self._lock:
            if key in self._readers:  # opened meanwhile by another thread: use that one
                reader.release()
                self._readers.move_to_end(key)
                return self._readers[key]
            self._readers[key] = reader
            self._entries += reader.entries
            while len(self._readers) > self.capacity or self._entries > self.max_entries:
                _, old = self._readers.popitem(last=False)
                self._entries -= old.entries
                old.release()
        return reader

    def clear(self) -> None:
        with self._lock:
            for reader in self._readers.values():
                reader.release()
            self._readers.clear()
            self._entries = 0


@runtime_checkable
class Reusable(Protocol):
    """A reader an :class:`IdleReaders` can keep: it tells how large its directory is."""

    @property
    def entries(self) -> int: ...


R = TypeVar("R", bound=ChapterReader)


class IdleReaders:
    """Open 7z and RAR readers kept between requests, each used by one request at a time.

    py7zr and rarfile readers cannot serve two threads at once (py7zr decompresses
    through state on the reader), so unlike zip archives one reader is not shared:
    :meth:`open` hands out an idle reader of the same archive when there is one
    (its directory already parsed) and opens a new one otherwise, and the reader's
    ``close`` hands it back here. At most ``capacity`` readers and ``max_entries``
    directory entries are kept idle; beyond that the least recently returned are
    released.
    """

    def __init__(self, capacity: int = 16, max_entries: int = 200_000):
        self.capacity = capacity
        self.max_entries = max_entries
        self._idle: OrderedDict[tuple[str, int, int, int], ChapterReader] = OrderedDict()
        self._entries = 0
        self._lock = threading.Lock()

    def open(self, path: Path, make: Callable[[Path], R]) -> R:
        """An open reader of the archive at ``path``; ``make`` opens one when none is idle."""
        stat = path.stat()
        key = (str(path), stat.st_size, stat.st_mtime_ns)
        with self._lock:
            for slot in self._idle:
                if slot[:3] == key:
                    kept = self._idle.pop(slot)
                    self._entries -= _entries(kept)
                    self._lend(kept, key)
                    return kept  # type: ignore[return-value]
        reader = make(path)
        self._lend(reader, key)
        return reader

    def _lend(self, reader: ChapterReader, key: tuple[str, int, int]) -> None:
        """Make the reader's next ``close`` hand it back here, once: a second close of the
        same loan must not put it in the pool twice (and so in two requests' hands)."""
        returned = False

        def give_back(done: ChapterReader) -> None:
            nonlocal returned
            if not returned:
                returned = True
                self._keep(done, key)

        reader.keeper = give_back

    def _keep(self, reader: ChapterReader, key: tuple[str, int, int]) -> None:
        size = _entries(reader)
        if size > self.max_entries:
            self._forget(reader)
            return
        with self._lock:
            self._idle[(*key, id(reader))] = reader
            self._entries += size
            evicted = []
            while len(self._idle) > self.capacity or self._entries > self.max_entries:
                _, old = self._idle.popitem(last=False)
                self._entries -= _entries(old)
                evicted.append(old)
        for old in evicted:
            self._forget(old)

    def _forget(self, reader: ChapterReader) -> None:
        reader.keeper = None
        reader.release()

    def clear(self) -> None:
        with self._lock:
            readers = list(self._idle.values())
            self._idle.clear()
            self._entries = 0
        for reader in readers:
            self._forget(reader)


def _entries(reader: ChapterReader) -> int:
    return reader.entries if isinstance(reader, Reusable) else 0
