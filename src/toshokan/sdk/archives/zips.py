"""Zip chapters (``.cbz``): entries are streamed and seekable straight from the archive."""

import contextlib
import stat
import struct
import threading
import zipfile
import zlib
from pathlib import Path
from typing import BinaryIO

from toshokan.sdk.archives.base import ArchiveError, ChapterReader, TooLarge
from toshokan.sdk.digests import partial_md5_of

#: A zip entry's local header: signature, five 16-bit fields, CRC and sizes, name and extra lengths.
LOCAL_HEADER = struct.Struct("<4s5H3L2H")
#: Bytes of an entry read to know its image type (the longest signature checked is 16).
HEAD_BYTES = 16
#: Entries up to this size are read in one go off the archive's own file (ComicInfo.xml).
DIRECT_READ_BYTES = 256 * 1024


class ZipReader(ChapterReader):
    def __init__(self, path: Path, *, shared: bool = False):
        super().__init__(path)
        #: Kept open by a :class:`ZipDirectoryCache`, which closes it; ``close`` leaves it.
        self.shared = shared
        self._lock = threading.Lock()
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
            raise ArchiveError(f"not a readable zip archive ({error})") from None

    def close(self) -> None:
        if not self.shared:
            self._zip.close()

    def release(self) -> None:
        """Close for good (streams already open finish: zipfile counts its users)."""
        self._zip.close()

    @property
    def entries(self) -> int:
        return len(self._zip.filelist)

    def members(self) -> list[tuple[str, int, bool]]:
        out = []
        for info in self._zip.infolist():
            if info.is_dir():
                continue
            mode = info.external_attr >> 16
            out.append((info.filename, info.file_size, stat.S_ISLNK(mode)))
        return out

    def partial_md5(self) -> str:
        """From the archive's own file when this reader is not shared: no second open."""
        if self.shared or self._zip.fp is None:
            return super().partial_md5()
        with self._lock:
            return partial_md5_of(self._zip.fp)  # type: ignore[arg-type]

    def heads(self, names: list[str]) -> dict[str, bytes] | None:
        """Read straight off each entry's local header, without zipfile's per-entry stream:
        a scan checks every page this way for about the cost of listing it."""
        heads: dict[str, bytes] = {}
        try:
            # The archive's own file when this reader is not shared (a scan's): no second open.
            with (
                self._lock,
                (
                    contextlib.nullcontext(self._zip.fp)
                    if not self.shared and self._zip.fp is not None
                    else open(self.path, "rb")
                ) as raw,
            ):
                for name in names:
                    info = self._zip.getinfo(name)
                    raw.seek(info.header_offset)
                    header = raw.read(LOCAL_HEADER.size)
                    if len(header) < LOCAL_HEADER.size:
                        heads[name] = b""
                        continue
                    magic, _, flags, method, _, _, _, _, _, named, extra = LOCAL_HEADER.unpack(
                        header
                    )
                    if magic != b"PK\x03\x04":
                        heads[name] = b""
                    elif flags & 0x1 or method not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                        continue  # encrypted, or a method not checked cheaply: read when served
                    else:
                        raw.seek(named + extra, 1)
                        # The directory's size: a local header written before its data
                        # (a streamed zip, with a data descriptor after it) says 0.
                        data = raw.read(min(info.compress_size, 512 if method else HEAD_BYTES))
                        heads[name] = inflated(data) if method else data
        except (OSError, KeyError):
            return None
        return heads

    def read(self, name: str, limit: int) -> bytes:
        try:
            info = self._zip.getinfo(name)
            if info.file_size > limit:
                raise TooLarge(f"entry is larger than {limit} bytes")
            if info.flag_bits & 0x1:
                raise ArchiveError("entry is encrypted")
            direct = self._read_direct(info) if info.file_size <= DIRECT_READ_BYTES else None
            if direct is not None:
                return direct
            with self._lock:
                opened = self._zip.open(info)
            with opened as stream:
                data = stream.read(limit + 1)
        except ArchiveError:
            raise
        except (zipfile.BadZipFile, OSError, KeyError, EOFError, ValueError, RuntimeError) as error:
            raise ArchiveError(f"entry cannot be read ({error})") from None
        if len(data) > limit:
            raise TooLarge(f"entry is larger than {limit} bytes")
        return data

    def _read_direct(self, info: zipfile.ZipInfo) -> bytes | None:
        """A small stored or deflated entry read off its local header in one go, checked
        against its size and CRC: zipfile's entry stream costs a scan more than reading
        the ComicInfo.xml it holds. None leaves the entry to zipfile (and its errors)."""
        if self.shared or self._zip.fp is None:
            return None
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            return None
        if info.compress_size > DIRECT_READ_BYTES:  # the directory's word is not trusted
            return None
        raw = self._zip.fp
        with self._lock:
            raw.seek(info.header_offset)
            header = raw.read(LOCAL_HEADER.size)
            if len(header) < LOCAL_HEADER.size:
                return None
            magic, *_, named, extra = LOCAL_HEADER.unpack(header)
            if magic != b"PK\x03\x04":
                return None
            try:
                expected = info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437")
            except UnicodeEncodeError:
                return None
            if raw.read(named) != expected:  # zipfile refuses it, and says why
                return None
            raw.seek(extra, 1)
            packed = raw.read(info.compress_size)
        if len(packed) != info.compress_size:
            return None
        try:
            # Never more than the entry says it holds, whatever the bytes inflate to.
            inflating = zlib.decompressobj(-15)
            data = (
                inflating.decompress(packed, info.file_size + 1) if info.compress_type else packed
            )
        except zlib.error:
            return None
        if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
            return None
        return data

    def size(self, name: str) -> int:
        try:
            return self._zip.getinfo(name).file_size
        except KeyError:
            raise ArchiveError("no such entry") from None

    def open(self, name: str) -> BinaryIO:
        try:
            # ZipExtFile: streams and seeks without extracting anything. Several threads
            # may open entries of one shared reader; zipfile counts them unlocked.
            with self._lock:
                return self._zip.open(name)  # type: ignore[return-value]
        except (zipfile.BadZipFile, OSError, KeyError, EOFError, ValueError, RuntimeError) as error:
            raise ArchiveError(f"entry cannot be read ({error})") from None


def inflated(data: bytes) -> bytes:
    """The first bytes a deflated entry holds; empty when they do not inflate."""
    try:
        return zlib.decompressobj(-15).decompress(data, HEAD_BYTES)
    except zlib.error:
        return b""
