"""What every chapter reader is: a list of entries, and one entry's bytes or stream.

Entry names come from strangers' archives, so they are treated as hostile:
absolute names, ``..`` segments and symlink entries are ignored (and reported),
and only names that were listed as safe pages are ever opened.
"""

import io
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Protocol, Self, TypeVar

from toshokan.sdk.archives import limits
from toshokan.sdk.archives.streams import sniff_media_type
from toshokan.sdk.digests import partial_md5
from toshokan.sdk.names import is_image_name, natural_key


class ArchiveError(Exception):
    """A chapter that cannot be read; the message is the reason shown to the operator."""


class TooLarge(ArchiveError):
    """An entry past a bound the host keeps (bytes held in memory, decompression work):
    refused as too large, which is not the same as damaged."""


class _LockableArchive(Protocol):
    def needs_password(self) -> bool: ...

    def close(self) -> None: ...


Opened = TypeVar("Opened", bound=_LockableArchive)
Work = TypeVar("Work", int, float)


def open_archive(
    kind: str, opener: Callable[[], Opened], errors: tuple[type[BaseException], ...]
) -> Opened:
    """The archive ``opener`` opens with its library. An encrypted one is refused (the host
    has no password to give), and the library's own ``errors`` for a damaged file become
    :class:`ArchiveError`, so that every kind of archive fails alike."""
    try:
        archive = opener()
        if archive.needs_password():
            archive.close()
            raise ArchiveError(f"{kind} archive is encrypted")
    except ArchiveError:
        raise
    except errors as error:
        raise ArchiveError(
            f"not a readable {kind} archive ({type(error).__name__}: {error})"
        ) from None
    return archive


def work_to(work: Mapping[str, Work], name: str) -> Work:
    """What reaching entry ``name`` costs in decompression, as ``work`` has it by entry."""
    try:
        return work[name]
    except KeyError:
        raise ArchiveError("no such entry") from None


@dataclass(frozen=True)
class Member:
    name: str
    size: int


@dataclass
class Listing:
    """What the scanner learns from opening a chapter once."""

    pages: list[Member]
    comicinfo: bytes | None
    warnings: list[str] = field(default_factory=list)


#: A name safe_member_name keeps as it is and _junk does not refuse for a hidden part: no
#: backslash, NUL or colon, no part empty or starting with a dot (so no "." or "..").
PLAIN_NAME = r"[^/\\\x00:.][^/\\\x00:]*(?:/[^/\\\x00:.][^/\\\x00:]*)*"
_PLAIN_NAME = re.compile(PLAIN_NAME)


def safe_member_name(name: str) -> str | None:
    """The entry name normalised to ``a/b.jpg``, or None when it could point anywhere else."""
    cleaned = name.replace("\\", "/")
    if cleaned.startswith("/") or (len(cleaned) > 1 and cleaned[1] == ":") or "\x00" in cleaned:
        return None
    parts = [p for p in cleaned.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        return None
    return "/".join(parts)


def _junk(name: str) -> bool:
    """Resource forks and hidden files that tools leave in archives."""
    # ``name`` is normalised (safe_member_name): its parts are what split gives, and no Path
    # is built for each entry of each archive a scan opens.
    return any(p.startswith(".") or p == "__MACOSX" for p in name.split("/"))


class ChapterReader(ABC):
    """One open chapter container. Use as a context manager; not shared between threads."""

    #: Set by a :class:`~toshokan.sdk.archives.directories.IdleReaders` that keeps this
    #: reader open between requests: ``close`` hands it back there instead of releasing it.
    keeper: "Callable[[ChapterReader], None] | None" = None

    def __init__(self, path: Path | str):
        self._path = path

    @property
    def path(self) -> Path:
        """The container's file; a :class:`Path` is made only when asked for (a scan opens
        every zip of a library by its name and never asks)."""
        path = self._path
        return path if isinstance(path, Path) else Path(path)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Done with the container: kept for the next request, or released."""
        if self.keeper is not None:
            self.keeper(self)
        else:
            self.release()

    def release(self) -> None:  # noqa: B027 - most readers hold nothing
        """Let go of the container for good."""

    def partial_md5(self) -> str:
        """KOReader's id of the container's file (:func:`~toshokan.sdk.partial_md5`)."""
        return partial_md5(self.path)

    @abstractmethod
    def members(self) -> list[tuple[str, int, bool]]:
        """Every file entry as (raw name, size, is_symlink)."""

    @abstractmethod
    def read(self, name: str, limit: int) -> bytes:
        """The whole entry, refusing more than ``limit`` bytes."""

    def open(self, name: str) -> BinaryIO:
        """A readable (and, where the format allows, seekable) stream of the entry.

        Formats that cannot stream hold the entry in memory, at most
        :data:`~toshokan.sdk.archives.limits.MAX_BUFFERED_BYTES`.
        """
        return io.BytesIO(self.read(name, limits.MAX_BUFFERED_BYTES))

    def size(self, name: str) -> int:
        """The entry's uncompressed size, from the directory where the format has one."""
        for raw, size, _ in self.members():
            if raw == name:
                return size
        raise ArchiveError("no such entry")

    def heads(self, names: list[str]) -> dict[str, bytes] | None:
        """The first bytes of each of these entries, to tell an image from a damaged page
        at scan time; None where the format cannot say so cheaply (solid 7z, RAR: reading
        every page whole would cost a scan more than opening the archive)."""
        return None

    def _damaged_pages(self, pages: list[Member]) -> list[str]:
        """A warning for each page whose first bytes are no image: it stays in the chapter
        (the pages after it keep their numbers) and is served as a damaged page."""
        heads = self.heads([m.name for m in pages])
        if heads is None:
            return []
        return [
            f"page {number} ({member.name[:80]!r}) is damaged: its bytes are not an image"
            for number, member in enumerate(pages, 1)
            if member.name in heads and sniff_media_type(heads[member.name]) is None
        ]

    def listing(self, *, comicinfo_limit: int) -> Listing:
        """The pages in reading order and the ComicInfo.xml bytes, for the scanner."""
        pages: list[Member] = []
        warnings: list[str] = []
        comicinfo_name: str | None = None
        unsafe = 0
        for raw, size, is_link in self.members():
            # Most names are plain ("001.jpg", "Vol 1/002.png"): already what
            # safe_member_name makes of them, and no part of them hidden junk.
            plain = _PLAIN_NAME.fullmatch(raw) is not None
            name = raw if plain else safe_member_name(raw)
            if name is None or is_link:
                unsafe += 1
                continue
            if (not plain or "__MACOSX" in name) and _junk(name):
                continue
            if name.rsplit("/", 1)[-1].lower() == "comicinfo.xml":
                if comicinfo_name is None or "/" not in name:
                    comicinfo_name = raw
                continue
            if not is_image_name(name):
                continue
            if size > limits.MAX_PAGE_BYTES:
                warnings.append(
                    f"entry {name[:80]!r} ignored: larger than {limits.MAX_PAGE_BYTES} bytes"
                )
                continue
            pages.append(Member(raw, size))
        if unsafe:
            warnings.append(f"{unsafe} entries ignored: absolute, '..' or symlink names")
        pages.sort(key=lambda m: natural_key(m.name.replace("\\", "/")))
        warnings += self._damaged_pages(pages)
        comicinfo: bytes | None = None
        if comicinfo_name is not None:
            try:
                comicinfo = self.read(comicinfo_name, comicinfo_limit)
            except ArchiveError as error:
                warnings.append(f"ComicInfo.xml ignored: {error}")
        return Listing(pages=pages, comicinfo=comicinfo, warnings=warnings)
