"""A page of a plain zip read off its central directory, without :class:`zipfile.ZipFile`.

A ``ZipFile`` builds an object for every entry of the archive before it reads one;
for a page of a chapter not opened recently that was half of what the page cost.
Here the directory is parsed once by :class:`~toshokan.sdk.archives.zipscan.ZipScan`
(one read of the archive's tail) and kept, without the open file, for many more
archives than open ``ZipFile`` objects could be; a page is then one positioned
read of its local header and bytes, inflated with :mod:`zlib` when deflated, and
checked against its size and CRC.

Only what zipfile would read the same way is answered here: anything else (an
archive :class:`ZipScan` refuses, a name not listed, a large, encrypted or oddly
compressed entry, a local header that differs from the directory, entries that
overlap, bytes that do not check out) raises :class:`UnusualZip`, and the caller
reads the page with :class:`~toshokan.sdk.archives.zips.ZipReader`, whose answers
and errors then apply.
"""

import os
import threading
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from toshokan.sdk.archives.zips import LOCAL_HEADER
from toshokan.sdk.archives.zipscan import DirectoryEntry, UnusualZip, ZipScan

#: Flags zipfile reads otherwise or refuses: encrypted, compressed patched data, strong
#: encryption.
_REFUSED_FLAGS = 0x1 | 0x20 | 0x40
_UTF8_NAME = 0x800
#: Bytes read past an entry's name at once, for a usual local extra field.
_EXTRA_ALLOWANCE = 64

#: A name's entry and where the next entry (or the central directory) starts.
Directory = dict[str, tuple[DirectoryEntry, int]]


def directory_of(scan: ZipScan) -> Directory:
    """Each name's last entry (as zipfile's look-up has it) and where its bytes must end."""
    entries = scan.entries
    offsets = sorted(entry.offset for entry in entries)
    if len(set(offsets)) != len(offsets):
        raise UnusualZip()  # zipfile calls entries sharing a start overlapped
    ends = dict(zip(offsets, [*offsets[1:], scan.directory_at], strict=True))
    return {entry.name: (entry, ends[entry.offset]) for entry in entries}


def read_page(
    read: Callable[[int, int], bytes], directory: Directory, name: str, limit: int
) -> bytes:
    """Entry ``name``'s bytes, ``read(offset, count)`` reading the archive."""
    found = directory.get(name)
    if found is None:
        raise UnusualZip()
    entry, end = found
    method = entry.method
    if (
        entry.size > limit
        or entry.flags & _REFUSED_FLAGS
        or method not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
        or (method == zipfile.ZIP_STORED and entry.compressed != entry.size)
        # More than deflate can make of its size (zlib's bound is below this): read in one
        # piece, it would cost memory the page's limit does not bound.
        or entry.compressed > entry.size + (entry.size >> 6) + 64
    ):
        raise UnusualZip()
    header_size, named, packed_size = LOCAL_HEADER.size, len(entry.name_bytes), entry.compressed
    if entry.offset + header_size + named + packed_size > end:
        raise UnusualZip()  # runs into the next entry, whatever its extra field
    chunk = read(entry.offset, header_size + named + _EXTRA_ALLOWANCE + packed_size)
    if len(chunk) < header_size + named:
        raise UnusualZip()
    magic, _, flags, *_, local_named, extra = LOCAL_HEADER.unpack_from(chunk)
    if (
        magic != b"PK\x03\x04"
        or local_named != named
        or (flags ^ entry.flags) & _UTF8_NAME  # the name would decode otherwise
        or chunk[header_size : header_size + named] != entry.name_bytes
    ):
        raise UnusualZip()
    start = header_size + named + extra
    if entry.offset + start + packed_size > end:
        raise UnusualZip()  # zipfile refuses overlapping entries
    packed = chunk[start : start + packed_size]
    if len(packed) < packed_size:
        packed = read(entry.offset + start, packed_size)
        if len(packed) != packed_size:
            raise UnusualZip()
    try:
        # Never more than the entry says it holds, whatever the bytes inflate to.
        data = zlib.decompressobj(-15).decompress(packed, entry.size + 1) if method else packed
    except zlib.error:
        raise UnusualZip() from None
    if len(data) != entry.size or zlib.crc32(data) != entry.crc:
        raise UnusualZip()
    return data


class ZipPages:
    """Plain zip directories kept by path, size and modification time, for pages.

    No file is held open, so the bound is on directory entries in all, not on
    archives: a library's readers move between many chapters. Least recently used
    leave first; a directory larger than the bound is not kept.
    """

    def __init__(self, max_entries: int = 200_000):
        self.max_entries = max_entries
        self._directories: OrderedDict[tuple[str, int, int], Directory] = OrderedDict()
        self._entries = 0
        self._lock = threading.Lock()

    def read(self, path: Path, size: int, mtime_ns: int, name: str, limit: int) -> bytes:
        """Entry ``name`` of the zip at ``path`` (which ``stat`` found ``size`` bytes long,
        modified at ``mtime_ns``); raises :class:`UnusualZip` when ``ZipReader`` must read it."""
        key = (str(path), size, mtime_ns)
        with self._lock:
            directory = self._directories.get(key)
            if directory is not None:
                self._directories.move_to_end(key)
        if directory is not None:
            fd = os.open(path, os.O_RDONLY)
            try:
                return read_page(lambda at, count: os.pread(fd, count, at), directory, name, limit)
            finally:
                os.close(fd)
        with ZipScan(path) as scan:
            if scan.file_size != size:
                raise UnusualZip()  # changed since its stat: the key would name other bytes
            directory = directory_of(scan)
            data = read_page(scan.bytes_at, directory, name, limit)
        self._keep(key, directory)
        return data

    def _keep(self, key: tuple[str, int, int], directory: Directory) -> None:
        if len(directory) > self.max_entries:
            return
        with self._lock:
            if key in self._directories:
                return
            self._directories[key] = directory
            self._entries += len(directory)
            while self._entries > self.max_entries:
                _, old = self._directories.popitem(last=False)
                self._entries -= len(old)

    def clear(self) -> None:
        with self._lock:
            self._directories.clear()
            self._entries = 0
