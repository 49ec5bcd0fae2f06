"""A zip chapter as a scan reads it: one read of the archive, no :class:`zipfile.ZipFile`.

A first scan opens every archive of a library once, for its page names and sizes,
the first bytes of each page and its ComicInfo.xml. Building a ``ZipFile`` for that
(an object per entry, a read per header) cost a scan more than everything else it
does with an archive. Here the central directory is parsed with :mod:`struct` out
of one read of the archive's tail (of the whole file, when it is small, as most
chapters' are not but a small library's are), and pages' headers and
ComicInfo.xml come out of the same bytes or one positioned read each.

The listing of the usual chapter (every name plain, no page to warn of) is made in
one pass over the directory's entries; anything else is listed the general way.

Only the plain case is read this way, and it answers exactly what
:class:`~toshokan.sdk.archives.zips.ZipReader` would. Anything else (an archive
comment, zip64, an archive glued to other bytes, a directory past
:data:`MAX_DIRECTORY_BYTES`, a damaged record, a ComicInfo.xml that is compressed
oddly or does not check out) raises :class:`UnusualZip`, and the scan reads that
archive with ``ZipReader``, whose checks and error messages then apply.
"""

import os
import re
import stat
import struct
import zipfile
import zlib
from pathlib import Path
from typing import NamedTuple

from toshokan.sdk.archives import limits
from toshokan.sdk.archives.base import (
    PLAIN_NAME,
    ArchiveError,
    ChapterReader,
    Listing,
    Member,
    TooLarge,
)
from toshokan.sdk.archives.streams import sniff_media_type
from toshokan.sdk.archives.zips import DIRECT_READ_BYTES, HEAD_BYTES, LOCAL_HEADER, inflated
from toshokan.sdk.digests import OFFSETS, SAMPLE, md5_of_samples, partial_md5_of_bytes
from toshokan.sdk.names import IMAGE_TYPES, natural_key

#: The end of central directory record without a comment, and a central directory entry.
_END = struct.Struct("<4s4H2LH")
_ENTRY = struct.Struct("<4s4B4HL2L5H2L")
_ZIP64_LOCATOR = b"PK\x06\x07"
#: Archives up to this size are read whole in one go: their pages' headers, ComicInfo.xml
#: and KOReader's samples are then all in hand.
WHOLE_FILE_BYTES = 256 * 1024
#: Otherwise this much of the archive's end is read, which holds the central directory
#: of a chapter of a few hundred pages.
TAIL_BYTES = 64 * 1024
#: A larger central directory (about 40,000 entries) is left to ``ZipReader``.
MAX_DIRECTORY_BYTES = 4 * 1024 * 1024
#: Bytes read past a page's local header at once: its name, a usual extra field, the
#: first bytes of the page (a deflated one needs more of them to inflate 16).
_HEAD_READ = LOCAL_HEADER.size + 512 + 512
#: Newest zip version zipfile reads; a newer one is for zipfile to refuse.
_MAX_EXTRACT_VERSION = 63
#: Every name of an archive plain (base.PLAIN_NAME, a folder's with its slash), joined by NULs,
#: which no name holds.
_PLAIN_NAMES = re.compile(rf"{PLAIN_NAME}/?(?:\x00{PLAIN_NAME}/?)*")


class UnusualZip(Exception):
    """Not an archive this reader answers for: read it with ``ZipReader``."""


class DirectoryEntry(NamedTuple):
    """What a scan needs of a central directory entry."""

    name: str
    name_bytes: bytes
    flags: int
    method: int
    crc: int
    compressed: int
    size: int
    offset: int
    link: bool


class ZipScan(ChapterReader):
    """A zip archive's directory, page heads and small entries, for one scan's listing."""

    def __init__(self, path: Path | str, size: int | None = None):
        """``size``: the file's size as last seen (a scan's walk stat-ed it), if known; a
        file of that size still, small enough, is read whole without asking its size."""
        super().__init__(path)
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            raise UnusualZip() from None
        self._fd = fd
        try:
            self._read_directory(size)
        except BaseException:
            os.close(fd)
            raise

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def _read_directory(self, seen: int | None) -> None:
        # A small file read with one byte more than the size seen: as many bytes back, and
        # no more, are the whole file as it is now (one call fewer than asking its size).
        size = seen if seen is not None and seen <= WHOLE_FILE_BYTES else -1
        data = os.pread(self._fd, size + 1, 0) if size >= 0 else b""
        start = 0
        if len(data) != size:
            size = os.fstat(self._fd).st_size
            start = 0 if size <= WHOLE_FILE_BYTES else size - TAIL_BYTES
            data = os.pread(self._fd, size - start, start)
            if len(data) != size - start:
                raise UnusualZip()
        self._file_size = size
        self._start = start
        self._data = data
        if size < _END.size:
            raise UnusualZip()
        end = len(data) - _END.size
        signature, disk, disk_dir, _, _, directory_size, directory_at, comment = _END.unpack_from(
            data, end
        )
        if signature != b"PK\x05\x06" or comment or disk or disk_dir:
            raise UnusualZip()  # no record where an archive without a comment has it
        if end >= 20 and data[end - 20 : end - 16] == _ZIP64_LOCATOR:
            raise UnusualZip()
        if directory_at + directory_size != start + end or directory_size > MAX_DIRECTORY_BYTES:
            raise UnusualZip()  # bytes before the archive, or a directory not where it says
        at = directory_at - start
        if at < 0:
            directory = os.pread(self._fd, directory_size, directory_at)
            at = 0
            if len(directory) != directory_size:
                raise UnusualZip()
        else:
            directory = data
        #: Where the central directory starts: the end of the last entry's data.
        self.directory_at = directory_at
        self._entries = self._parse(directory, at, at + directory_size)
        self._names: dict[str, DirectoryEntry] | None = None

    @property
    def _by_name(self) -> dict[str, DirectoryEntry]:
        """The last entry of each name, as zipfile's look-up has it; made when first asked
        (the listing of a usual chapter never asks)."""
        if self._names is None:
            self._names = {entry.name: entry for entry in self._entries}
        return self._names

    def _parse(self, directory: bytes, at: int, stop: int) -> list[DirectoryEntry]:
        entries: list[DirectoryEntry] = []
        unpack, entry_size = _ENTRY.unpack_from, _ENTRY.size
        while at < stop:
            if at + entry_size > stop:
                raise UnusualZip()
            (
                signature,
                _,
                _,
                version,
                _,
                flags,
                method,
                _,
                _,
                crc,
                compressed,
                size,
                named,
                extra,
                comment,
                _,
                _,
                attributes,
                offset,
            ) = unpack(directory, at)
            if signature != b"PK\x01\x02" or version > _MAX_EXTRACT_VERSION:
                raise UnusualZip()
            if 0xFFFFFFFF in (compressed, size, offset):
                raise UnusualZip()  # zip64 values
            name_at = at + entry_size
            name_bytes = directory[name_at : name_at + named]
            if extra:
                _check_extra(directory[name_at + named : name_at + named + extra])
            at = name_at + named + extra + comment
            if at > stop:
                raise UnusualZip()
            try:
                # ASCII reads the same in both encodings, and decodes fastest.
                name = name_bytes.decode(
                    "ascii" if name_bytes.isascii() else "utf-8" if flags & 0x800 else "cp437"
                )
            except UnicodeDecodeError:
                raise UnusualZip() from None
            if not name or "\x00" in name:
                raise UnusualZip()  # zipfile cuts the name short, or fails on it
            link = (attributes >> 16) & 0o170000 == stat.S_IFLNK  # stat.S_ISLNK, inline
            entries.append(
                DirectoryEntry(name, name_bytes, flags, method, crc, compressed, size, offset, link)
            )
        return entries

    def _bytes(self, offset: int, count: int) -> bytes:
        """``count`` bytes at ``offset`` (fewer at the end of the file), from what was read
        when it holds them."""
        start = offset - self._start
        if start >= 0 and (start + count <= len(self._data) or not self._start):
            return self._data[start : start + count]
        return os.pread(self._fd, count, offset)

    @property
    def file_size(self) -> int:
        return self._file_size

    @property
    def entries(self) -> list[DirectoryEntry]:
        """The central directory's entries, in its order (a name may come twice)."""
        return self._entries

    def bytes_at(self, offset: int, count: int) -> bytes:
        """``count`` bytes at ``offset``, from what was read when it holds them."""
        return self._bytes(offset, count)

    def members(self) -> list[tuple[str, int, bool]]:
        return [
            (entry.name, entry.size, entry.link)
            for entry in self._entries
            if not entry.name.endswith("/")
        ]

    def heads(self, names: list[str]) -> dict[str, bytes] | None:
        """:meth:`ZipReader.heads`, off the bytes already read where they hold the page."""
        by_name = self._by_name
        heads: dict[str, bytes] = {}
        for name in names:
            head = self._head(by_name[name])
            if head is not None:
                heads[name] = head
        return heads

    def _head(self, entry: DirectoryEntry) -> bytes | None:
        """An entry's first bytes as :meth:`ZipReader.heads` reads them (empty without a
        local header); None for an entry it does not look into (encrypted, or compressed
        otherwise than stored or deflated)."""
        header_size = LOCAL_HEADER.size
        chunk = self._bytes(entry.offset, _HEAD_READ)
        if len(chunk) < header_size:
            return b""
        magic, _, flags, method, _, _, _, _, _, named, extra = LOCAL_HEADER.unpack_from(chunk)
        if magic != b"PK\x03\x04":
            return b""
        if flags & 0x1 or method not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            return None
        start = header_size + named + extra
        # The directory's size, as ZipReader.heads takes it (a streamed zip's local header
        # says 0).
        want = min(entry.compressed, 512 if method else HEAD_BYTES)
        data = chunk[start : start + want]
        if len(data) < want and len(chunk) == _HEAD_READ:
            data = self._bytes(entry.offset + start, want)
        return inflated(data) if method else data

    def read(self, name: str, limit: int) -> bytes:
        """A small entry (ComicInfo.xml) as ``ZipReader`` reads it off its local header."""
        entry = self._by_name.get(name)
        if entry is None:
            raise UnusualZip()
        return self._read(entry, limit)

    def _read(self, entry: DirectoryEntry, limit: int) -> bytes:
        if entry.size > limit:
            raise TooLarge(f"entry is larger than {limit} bytes")
        if entry.flags & 0x1:
            raise ArchiveError("entry is encrypted")
        if (
            entry.size > DIRECT_READ_BYTES
            or entry.compressed > DIRECT_READ_BYTES
            or entry.method not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
        ):
            raise UnusualZip()
        named = len(entry.name_bytes)
        chunk = self._bytes(entry.offset, LOCAL_HEADER.size + named)
        if len(chunk) < LOCAL_HEADER.size:
            raise UnusualZip()
        magic, *_, local_named, extra = LOCAL_HEADER.unpack_from(chunk)
        if magic != b"PK\x03\x04" or local_named != named:
            raise UnusualZip()
        if chunk[LOCAL_HEADER.size :] != entry.name_bytes:
            raise UnusualZip()
        packed = self._bytes(entry.offset + LOCAL_HEADER.size + named + extra, entry.compressed)
        if len(packed) != entry.compressed:
            raise UnusualZip()
        try:
            data = (
                zlib.decompressobj(-15).decompress(packed, entry.size + 1)
                if entry.method
                else packed
            )
        except zlib.error:
            raise UnusualZip() from None
        if len(data) != entry.size or zlib.crc32(data) != entry.crc:
            raise UnusualZip()
        return data

    def listing(self, *, comicinfo_limit: int) -> Listing:
        """:meth:`ChapterReader.listing`, in fewer steps for the usual chapter: every name
        plain, none repeated, no link, every page an image of a usual size whose first bytes
        say so, ComicInfo.xml read without a fault. Anything else, which may warn, is
        listed the general way."""
        plain = self._plain_listing(comicinfo_limit)
        return plain if plain is not None else super().listing(comicinfo_limit=comicinfo_limit)

    def _plain_listing(self, comicinfo_limit: int) -> Listing | None:
        entries = self._entries
        names = [entry.name for entry in entries]
        joined = "\x00".join(names)
        if (
            _PLAIN_NAMES.fullmatch(joined) is None
            or "__MACOSX" in joined
            or len(set(names)) != len(names)
        ):
            return None
        pages: dict[str, DirectoryEntry] = {}
        comicinfo: DirectoryEntry | None = None
        for entry in entries:
            name = entry.name
            if name[-1] == "/":
                continue  # a folder
            if entry.link:
                return None
            # A plain name's last part starts with no dot, so the extension is after its
            # last dot, as is_image_name has it.
            extension = name[name.rfind(".") :].lower()
            if extension in IMAGE_TYPES:
                if entry.size > limits.MAX_PAGE_BYTES:
                    return None
                pages[name] = entry
            elif (
                extension == ".xml"
                and name[name.rfind("/") + 1 :].lower() == "comicinfo.xml"
                and (comicinfo is None or "/" not in name)
            ):
                comicinfo = entry
        order = sorted(pages, key=natural_key)
        for name in order:
            head = self._head(pages[name])
            if head is not None and sniff_media_type(head) is None:
                return None  # a damaged page, to warn of
        data = None
        if comicinfo is not None:
            try:
                data = self._read(comicinfo, comicinfo_limit)
            except ArchiveError:
                return None  # ignored, with a warning
        return Listing(pages=[Member(name, pages[name].size) for name in order], comicinfo=data)

    def partial_md5(self) -> str:
        if not self._start:  # the whole file is in hand
            return partial_md5_of_bytes(self._data)
        fd = self._fd
        return md5_of_samples(os.pread(fd, SAMPLE, offset) for offset in OFFSETS)


def _check_extra(extra: bytes) -> None:
    """Refuse what zipfile reads differently in an entry's extra field: zip64 sizes, or a
    field that runs past its end (zipfile's error is the one to show)."""
    at = 0
    while len(extra) - at >= 4:
        kind, length = struct.unpack_from("<HH", extra, at)
        if kind == 0x0001 or at + 4 + length > len(extra):
            raise UnusualZip()
        at += 4 + length


def scan_zip(
    path: Path | str, *, comicinfo_limit: int, size: int | None = None
) -> tuple[Listing, str | None]:
    """The listing of a plain zip chapter and KOReader's id of its file (None without
    pages); raises :class:`UnusualZip` when ``ZipReader`` must read it instead. ``size``:
    see :class:`ZipScan`."""
    with ZipScan(path, size) as reader:
        listing = reader.listing(comicinfo_limit=comicinfo_limit)
        return listing, reader.partial_md5() if listing.pages else None
