"""Readers for the containers a chapter can live in, behind one interface.

A chapter is a zip (``.cbz``), 7z (``.cb7``), RAR (``.cbr``) archive, a PDF
(pages rendered on demand), an EPUB of page images or a folder of images. The
scanner needs each one's image list and ComicInfo.xml; the page route needs
one image as a stream. Nothing is ever extracted to disk; rendered PDF pages
may be kept in a size-capped :class:`DiskCache`.

Entry names come from strangers' archives, so they are treated as hostile:
absolute names, ``..`` segments and symlink entries are ignored (and reported),
and only names that were listed as safe pages are ever opened.
"""

import hashlib
import io
import logging
import os
import posixpath
import re
import shutil
import stat
import threading
import zipfile
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO
from urllib.parse import unquote
from xml.etree.ElementTree import Element, ParseError

import py7zr
import py7zr.io
import pypdfium2 as pdfium
import rarfile
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from toshokan.sdk.names import (
    RAR_EXTENSIONS,
    SEVENZIP_EXTENSIONS,
    ZIP_EXTENSIONS,
    is_image_name,
    natural_key,
)

#: An entry larger than this is not treated as a page (a decompression bomb or not a page at all).
MAX_PAGE_BYTES = 128 * 1024 * 1024

#: Formats that cannot stream an entry (7z, compressed RAR) hold a page in memory to
#: serve it; this caps that memory per request. Larger pages of those formats are refused.
MAX_BUFFERED_BYTES = 32 * 1024 * 1024

#: Bytes a 7z reader may decompress to reach one entry. In a solid archive every
#: entry before it in its block is decompressed too, so a 1 KB page can cost
#: gigabytes of work; such entries are refused instead.
MAX_DECOMPRESS_WORK = 64 * 1024 * 1024

RAR_TOOLS = ("unrar", "unar", "7z", "7zz", "bsdtar")

PDF_EXTENSIONS = frozenset({".pdf"})
EPUB_EXTENSIONS = frozenset({".epub"})

#: An EPUB's container.xml and package document are small; larger ones are refused.
MAX_EPUB_PACKAGE_BYTES = 4 * 1024 * 1024
#: A spine document of a fixed-layout EPUB is a few hundred bytes around an image.
MAX_EPUB_DOCUMENT_BYTES = 1024 * 1024
MAX_EPUB_SPINE = 5000
#: Spine document bytes read for one EPUB in all; past it the rest of the spine is ignored.
MAX_EPUB_TEXT_BYTES = 64 * 1024 * 1024
#: The images a spine document shows: ``<img src>`` or SVG ``<image xlink:href>``.
_EPUB_IMAGE = re.compile(
    r"""<(?:img|image|svg:image)\b[^<>]*?\s(?:src|xlink:href|href)\s*=\s*["']([^"'<>]+)["']""",
    re.I,
)

#: Pages of a PDF beyond this are not listed (a chapter, not a phone book).
MAX_PDF_PAGES = 2000
#: A rendered PDF page is at most this many pixels on its longer side...
PDF_LONG_SIDE = 2000
#: ...and never drawn larger than this many times its size in points (a stamp-sized page).
PDF_MAX_SCALE = 4.0
PDF_JPEG_QUALITY = 88
#: Changes whenever rendering changes, so pages rendered the old way are not served.
PDF_RENDER_VERSION = 1

#: PDFium is not thread-safe: every call into it holds this lock.
_PDFIUM = threading.Lock()

log = logging.getLogger(__name__)


class ArchiveError(Exception):
    """A chapter that cannot be read; the message is the reason shown to the operator."""


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


def kind_of(path: Path | str) -> str | None:
    """The container kind of a file by extension: ``zip``, ``7z``, ``rar``, or None.

    Takes a bare name too: a scan asks this of every file, and building a Path
    for each one was a noticeable share of a rescan."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix in ZIP_EXTENSIONS:
        return "zip"
    if suffix in SEVENZIP_EXTENSIONS:
        return "7z"
    if suffix in RAR_EXTENSIONS:
        return "rar"
    if suffix in PDF_EXTENSIONS:
        return "pdf"
    if suffix in EPUB_EXTENSIONS:
        return "epub"
    return None


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
    parts = PurePosixPath(name).parts
    return any(p.startswith(".") or p == "__MACOSX" for p in parts)


def rar_tool() -> str | None:
    """The RAR-capable system tool rarfile can use, or None."""
    for tool in RAR_TOOLS:
        if shutil.which(tool):
            return tool
    return None


def sniff_media_type(head: bytes) -> str | None:
    """The image type from the first bytes, so a mislabelled page is still served right."""
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[4:8] == b"ftyp" and head[8:12] in (b"avif", b"avis"):
        return "image/avif"
    return None


class ChapterReader(ABC):
    """One open chapter container. Use as a context manager; not shared between threads."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> "ChapterReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:  # noqa: B027 - most readers hold nothing
        """Release the container."""

    @abstractmethod
    def members(self) -> list[tuple[str, int, bool]]:
        """Every file entry as (raw name, size, is_symlink)."""

    @abstractmethod
    def read(self, name: str, limit: int) -> bytes:
        """The whole entry, refusing more than ``limit`` bytes."""

    def open(self, name: str) -> BinaryIO:
        """A readable (and, where the format allows, seekable) stream of the entry.

        Formats that cannot stream hold the entry in memory, at most
        :data:`MAX_BUFFERED_BYTES`.
        """
        return io.BytesIO(self.read(name, MAX_BUFFERED_BYTES))

    def size(self, name: str) -> int:
        """The entry's uncompressed size, from the directory where the format has one."""
        for raw, size, _ in self.members():
            if raw == name:
                return size
        raise ArchiveError("no such entry")

    def listing(self, *, comicinfo_limit: int) -> Listing:
        """The pages in reading order and the ComicInfo.xml bytes, for the scanner."""
        pages: list[Member] = []
        warnings: list[str] = []
        comicinfo_name: str | None = None
        unsafe = 0
        for raw, size, is_link in self.members():
            name = safe_member_name(raw)
            if name is None or is_link:
                unsafe += 1
                continue
            if _junk(name):
                continue
            if PurePosixPath(name).name.lower() == "comicinfo.xml":
                if comicinfo_name is None or "/" not in name:
                    comicinfo_name = raw
                continue
            if not is_image_name(name):
                continue
            if size > MAX_PAGE_BYTES:
                warnings.append(f"entry {name[:80]!r} ignored: larger than {MAX_PAGE_BYTES} bytes")
                continue
            pages.append(Member(raw, size))
        if unsafe:
            warnings.append(f"{unsafe} entries ignored: absolute, '..' or symlink names")
        pages.sort(key=lambda m: natural_key(m.name.replace("\\", "/")))
        comicinfo: bytes | None = None
        if comicinfo_name is not None:
            try:
                comicinfo = self.read(comicinfo_name, comicinfo_limit)
            except ArchiveError as error:
                warnings.append(f"ComicInfo.xml ignored: {error}")
        return Listing(pages=pages, comicinfo=comicinfo, warnings=warnings)


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

    def read(self, name: str, limit: int) -> bytes:
        try:
            info = self._zip.getinfo(name)
            if info.file_size > limit:
                raise ArchiveError(f"entry is larger than {limit} bytes")
            if info.flag_bits & 0x1:
                raise ArchiveError("entry is encrypted")
            with self._lock:
                opened = self._zip.open(info)
            with opened as stream:
                data = stream.read(limit + 1)
        except ArchiveError:
            raise
        except (zipfile.BadZipFile, OSError, KeyError, EOFError, ValueError, RuntimeError) as error:
            raise ArchiveError(f"entry cannot be read ({error})") from None
        if len(data) > limit:
            raise ArchiveError(f"entry is larger than {limit} bytes")
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


def _local(tag: object) -> str:
    """An XML tag without its namespace: EPUBs in the wild use several prefixes."""
    return str(tag).rsplit("}", 1)[-1]


def _xml(data: bytes, what: str) -> Element:
    try:
        element: Element = fromstring(data)
    except (ParseError, DefusedXmlException, ValueError) as error:
        raise ArchiveError(f"EPUB {what} is not readable XML ({type(error).__name__})") from None
    return element


class EpubReader(ZipReader):
    """An EPUB whose pages are images (a fixed-layout comic), in spine order.

    The spine lists documents in reading order; each one's images (``<img>``, or
    SVG ``<image>`` as most comic converters write) are its pages, and a spine
    item that is itself an image is a page. A text book has no such pages and
    is skipped as containing no images.
    """

    def listing(self, *, comicinfo_limit: int) -> Listing:
        found = super().listing(comicinfo_limit=comicinfo_limit)
        safe = {
            safe_member_name(raw): (raw, size) for raw, size, link in self.members() if not link
        }
        container = _xml(self.read("META-INF/container.xml", 64 * 1024), "container.xml")
        package = next(
            (e.get("full-path") for e in container.iter() if _local(e.tag) == "rootfile"), None
        )
        package_name = safe_member_name(package or "")
        if package_name is None or package_name not in safe:
            raise ArchiveError("EPUB names no package document")
        opf = _xml(self.read(safe[package_name][0], MAX_EPUB_PACKAGE_BYTES), "package document")
        base = posixpath.dirname(package_name)
        items = {
            e.get("id"): (e.get("href") or "", e.get("media-type") or "")
            for e in opf.iter()
            if _local(e.tag) == "item"
        }
        spine = [e.get("idref") for e in opf.iter() if _local(e.tag) == "itemref"]
        pages: list[Member] = []
        seen: set[str] = set()

        def add(href: str, relative_to: str) -> None:
            target = posixpath.normpath(posixpath.join(relative_to, unquote(href.split("#")[0])))
            name = safe_member_name(target)
            if name is None or name in seen or name not in safe or not is_image_name(name):
                return
            raw, size = safe[name]
            if size > MAX_PAGE_BYTES:
                found.warnings.append(
                    f"entry {name[:80]!r} ignored: larger than {MAX_PAGE_BYTES} bytes"
                )
                return
            seen.add(name)
            pages.append(Member(raw, size))

        if len(spine) > MAX_EPUB_SPINE:
            found.warnings.append(
                f"only the first {MAX_EPUB_SPINE} of {len(spine)} spine items read"
            )
        budget = MAX_EPUB_TEXT_BYTES
        for idref in spine[:MAX_EPUB_SPINE]:
            href, kind = items.get(idref, ("", ""))
            document = safe_member_name(posixpath.join(base, unquote(href)))
            if document is None or document not in safe:
                continue
            if kind.startswith("image/"):
                add(href, base)
                continue
            raw, size = safe[document]
            budget -= size
            if budget < 0:
                found.warnings.append(
                    f"spine documents past {MAX_EPUB_TEXT_BYTES} bytes in all ignored"
                )
                break
            try:
                text = self.read(raw, MAX_EPUB_DOCUMENT_BYTES)
            except ArchiveError as error:
                found.warnings.append(f"spine document {document[:80]!r} ignored: {error}")
                continue
            for source in _EPUB_IMAGE.findall(text.decode("utf-8", "replace")):
                add(source, posixpath.dirname(document))
        return Listing(pages=pages, comicinfo=found.comicinfo, warnings=found.warnings)


class SevenZipReader(ChapterReader):
    def __init__(self, path: Path):
        super().__init__(path)
        try:
            self._archive = py7zr.SevenZipFile(path, mode="r")
            if self._archive.needs_password():
                self._archive.close()
                raise ArchiveError("7z archive is encrypted")
        except ArchiveError:
            raise
        except Exception as error:  # py7zr raises many unrelated types for damaged files
            raise ArchiveError(
                f"not a readable 7z archive ({type(error).__name__}: {error})"
            ) from None

    def close(self) -> None:
        self._archive.close()

    def members(self) -> list[tuple[str, int, bool]]:
        out = []
        for info in self._archive.files:
            if info.is_directory:
                continue
            out.append((info.filename, int(info.uncompressed or 0), bool(info.is_symlink)))
        return out

    def work(self, name: str) -> int:
        """Bytes decompressed to reach ``name``: it and every entry before it in its block."""
        files = list(self._archive.files)
        target = next((info for info in files if info.filename == name), None)
        if target is None:
            raise ArchiveError("no such entry")
        total = 0
        for info in files:  # stream order: a block is decompressed from its start
            if target.folder is not None and info.folder is target.folder:
                total += int(info.uncompressed or 0)
            if info.filename == name:
                break
        return total

    def read(self, name: str, limit: int) -> bytes:
        work = self.work(name)
        if work > MAX_DECOMPRESS_WORK:
            raise ArchiveError(
                f"entry needs {work} bytes decompressed (solid block); the limit is "
                f"{MAX_DECOMPRESS_WORK}"
            )
        factory = py7zr.io.BytesIOFactory(limit + 1)
        try:
            self._archive.reset()
            self._archive.extract(targets=[name], factory=factory)
            data = factory.get(name).read()  # type: ignore[no-untyped-call]
        except Exception as error:
            raise ArchiveError(f"entry cannot be read ({type(error).__name__}: {error})") from None
        if len(data) > limit:
            raise ArchiveError(f"entry is larger than {limit} bytes")
        return bytes(data)


class RarReader(ChapterReader):
    def __init__(self, path: Path):
        super().__init__(path)
        try:
            self._rar = rarfile.RarFile(path)
            if self._rar.needs_password():
                self._rar.close()
                raise ArchiveError("RAR archive is encrypted")
        except ArchiveError:
            raise
        except (rarfile.Error, OSError, EOFError, ValueError) as error:
            raise ArchiveError(
                f"not a readable RAR archive ({type(error).__name__}: {error})"
            ) from None

    def close(self) -> None:
        self._rar.close()

    def members(self) -> list[tuple[str, int, bool]]:
        out = []
        for info in self._rar.infolist():
            if info.is_dir():
                continue
            out.append((info.filename or "", int(info.file_size or 0), bool(info.is_symlink())))
        return out

    def needs_tool(self, names: list[str]) -> bool:
        """Whether reading these entries needs an external tool (they are compressed)."""
        return any(self._rar.getinfo(n).compress_type != rarfile.RAR_M0 for n in names)

    def read(self, name: str, limit: int) -> bytes:
        try:
            info = self._rar.getinfo(name)
            if (info.file_size or 0) > limit:
                raise ArchiveError(f"entry is larger than {limit} bytes")
            with self._rar.open(info) as stream:
                data: bytes = stream.read(limit + 1)
        except ArchiveError:
            raise
        except rarfile.RarCannotExec:
            raise ArchiveError(
                "entry is compressed and no RAR tool is installed (install unrar, unar, 7z or "
                "bsdtar, e.g. Debian 'libarchive-tools')"
            ) from None
        except (rarfile.Error, OSError, EOFError, ValueError, KeyError) as error:
            raise ArchiveError(f"entry cannot be read ({type(error).__name__}: {error})") from None
        if len(data) > limit:
            raise ArchiveError(f"entry is larger than {limit} bytes")
        return data

    def open(self, name: str) -> BinaryIO:
        info = self._rar.getinfo(name)
        if info.compress_type == rarfile.RAR_M0:
            try:
                stream: BinaryIO = self._rar.open(info)
            except (rarfile.Error, OSError) as error:
                raise ArchiveError(f"entry cannot be read ({error})") from None
            return stream
        return super().open(name)

    def listing(self, *, comicinfo_limit: int) -> Listing:
        found = super().listing(comicinfo_limit=comicinfo_limit)
        if found.pages and self.needs_tool([m.name for m in found.pages]) and rar_tool() is None:
            raise ArchiveError(
                "RAR chapter has compressed pages and no RAR tool is installed "
                "(install unrar, unar, 7z or bsdtar, e.g. Debian 'libarchive-tools')"
            )
        return found


class FolderReader(ChapterReader):
    """A folder of images. Only regular files directly inside it, never outside ``root``."""

    def __init__(self, path: Path, root: Path):
        super().__init__(path)
        self.root = root
        if not path.is_dir():
            raise ArchiveError("chapter folder is gone or unreadable")

    def _inside(self, target: Path) -> bool:
        try:
            return target.resolve().is_relative_to(self.root)
        except (OSError, RuntimeError):
            return False

    def members(self) -> list[tuple[str, int, bool]]:
        out = []
        try:
            entries = list(os.scandir(self.path))
        except OSError as error:
            raise ArchiveError(f"chapter folder cannot be listed ({error.strerror})") from None
        for entry in entries:
            try:
                if not entry.is_file():
                    continue
                outside = entry.is_symlink() and not self._inside(Path(entry.path))
                out.append((entry.name, entry.stat().st_size, outside))
            except OSError:
                continue
        return out

    def _target(self, name: str) -> Path:
        if "/" in name or "\\" in name or name in ("", ".", ".."):
            raise ArchiveError("not a page of this folder")
        target = self.path / name
        if not self._inside(target):
            raise ArchiveError("page points outside the library")
        return target

    def size(self, name: str) -> int:
        try:
            return self._target(name).stat().st_size
        except OSError as error:
            raise ArchiveError(f"file cannot be read ({error.strerror})") from None

    def read(self, name: str, limit: int) -> bytes:
        target = self._target(name)
        try:
            with target.open("rb") as stream:
                data = stream.read(limit + 1)
        except OSError as error:
            raise ArchiveError(f"file cannot be read ({error.strerror})") from None
        if len(data) > limit:
            raise ArchiveError(f"file is larger than {limit} bytes")
        return data

    def open(self, name: str) -> BinaryIO:
        target = self._target(name)
        try:
            return target.open("rb")
        except OSError as error:
            raise ArchiveError(f"file cannot be read ({error.strerror})") from None


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


class DiskCache:
    """Bytes kept in files under ``root``, least recently used removed past ``max_bytes``.

    For work worth doing once (a rendered PDF page, a thumbnail) and too large to
    hold in memory. Keys are hashed, so any text names an entry.
    """

    def __init__(self, root: Path, max_bytes: int, *, suffix: str = ""):
        self.root, self.max_bytes, self.suffix = root, max_bytes, suffix
        self._size: int | None = None
        self._lock = threading.Lock()

    def _path(self, key: str) -> Path:
        digest = hashlib.sha256(key.encode()).hexdigest()[:40]
        return self.root / digest[:2] / f"{digest}{self.suffix}"

    def get(self, key: str) -> bytes | None:
        path = self._path(key)
        try:
            data = path.read_bytes()
            os.utime(path)  # recently used: kept longest
        except OSError:
            return None
        return data

    def put(self, key: str, data: bytes) -> None:
        if len(data) > self.max_bytes:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f"{path.name}.{threading.get_ident()}.part")
            partial.write_bytes(data)
            partial.replace(path)
        except OSError as error:
            log.warning("disk cache %s: write failed (%s)", self.root, type(error).__name__)
            return
        with self._lock:
            if self._size is None:
                self._size = sum(size for _, size, _ in self._files())
            else:
                self._size += len(data)
            if self._size > self.max_bytes:
                self._trim()

    def _files(self) -> list[tuple[float, int, Path]]:
        found = []
        for path in self.root.glob(f"*/*{self.suffix}"):
            try:
                stat = path.stat()
            except OSError:
                continue
            found.append((stat.st_mtime, stat.st_size, path))
        return found

    def _trim(self) -> None:
        """Down to 90% of the cap, oldest use first, so every put does not trim again."""
        files = sorted(self._files())
        total = sum(size for _, size, _ in files)
        for _, size, path in files:
            if total <= self.max_bytes * 0.9:
                break
            path.unlink(missing_ok=True)
            total -= size
        self._size = total


class PdfReader(ChapterReader):
    """A PDF whose pages become JPEG images, rendered by PDFium when first asked for.

    Pages are named ``00001.jpg`` and so on; a render is bounded in pixels
    (:data:`PDF_LONG_SIDE`, :data:`PDF_MAX_SCALE`) and kept in ``renders`` when
    given, keyed by the file's size and modification time.
    """

    def __init__(self, path: Path, renders: DiskCache | None = None):
        super().__init__(path)
        self.renders = renders
        self._last: tuple[str, bytes] | None = None
        #: Opened on first need: a page already rendered is served without PDFium.
        self._pdf: pdfium.PdfDocument | None = None
        self._count = 0
        try:
            stat = path.stat()
        except OSError as error:
            raise ArchiveError(f"cannot be opened ({error.strerror})") from None
        self._key = f"{path}:{stat.st_size}:{stat.st_mtime_ns}:{PDF_RENDER_VERSION}"

    def _document(self) -> pdfium.PdfDocument:
        """The open document; call with :data:`_PDFIUM` held."""
        if self._pdf is None:
            try:
                self._pdf = pdfium.PdfDocument(str(self.path))
                self._count = len(self._pdf)
            except pdfium.PdfiumError as error:
                raise ArchiveError(f"not a readable PDF ({error})") from None
            except OSError as error:
                raise ArchiveError(f"cannot be opened ({error.strerror})") from None
        return self._pdf

    @property
    def count(self) -> int:
        """Pages in the document."""
        with _PDFIUM:
            self._document()
        return self._count

    def close(self) -> None:
        if self._pdf is not None:
            with _PDFIUM:
                self._pdf.close()
            self._pdf = None

    def members(self) -> list[tuple[str, int, bool]]:
        return [(f"{n:05d}.jpg", 0, False) for n in range(1, min(self.count, MAX_PDF_PAGES) + 1)]

    def listing(self, *, comicinfo_limit: int) -> Listing:
        found = super().listing(comicinfo_limit=comicinfo_limit)
        if self.count > MAX_PDF_PAGES:
            found.warnings.append(f"only the first {MAX_PDF_PAGES} of {self.count} pages listed")
        return found

    @staticmethod
    def _number(name: str) -> int:
        stem, dot, ext = name.partition(".")
        if not (dot and ext == "jpg" and stem.isascii() and stem.isdigit() and len(stem) == 5):
            raise ArchiveError("no such entry")
        number = int(stem)
        if not 1 <= number <= MAX_PDF_PAGES:
            raise ArchiveError("no such entry")
        return number

    def size(self, name: str) -> int:
        return len(self.read(name, MAX_BUFFERED_BYTES))

    def read(self, name: str, limit: int) -> bytes:
        number = self._number(name)
        if self._last is not None and self._last[0] == name:
            data = self._last[1]
        else:
            # Cached only after a render succeeded, so a hit is a page this file has.
            key = f"{self._key}:{number}"
            cached = self.renders.get(key) if self.renders is not None else None
            data = cached if cached is not None else self._render(number)
            if cached is None and self.renders is not None:
                self.renders.put(key, data)
            self._last = (name, data)
        if len(data) > limit:
            raise ArchiveError(f"entry is larger than {limit} bytes")
        return data

    def _render(self, number: int) -> bytes:
        try:
            with _PDFIUM:
                document = self._document()
                if number > self._count:
                    raise ArchiveError("no such entry")
                page = document[number - 1]
                try:
                    width, height = page.get_size()
                    if not (width > 0 and height > 0):
                        raise ArchiveError("page has no size")
                    scale = min(PDF_MAX_SCALE, PDF_LONG_SIDE / max(width, height))
                    bitmap = page.render(scale=scale)
                    image = bitmap.to_pil().convert("RGB")  # a copy: the bitmap can go
                    bitmap.close()
                finally:
                    page.close()
        except pdfium.PdfiumError as error:
            raise ArchiveError(f"page cannot be rendered ({error})") from None
        out = io.BytesIO()
        image.save(out, "JPEG", quality=PDF_JPEG_QUALITY)
        return out.getvalue()


def open_chapter(
    path: Path, kind: str, root: Path, *, renders: DiskCache | None = None
) -> ChapterReader:
    """Open a chapter container of ``kind`` (``zip``, ``7z``, ``rar``, ``pdf``, ``epub``, ``dir``).

    ``renders`` keeps rendered PDF pages, when given."""
    try:
        if kind == "zip":
            return ZipReader(path)
        if kind == "7z":
            return SevenZipReader(path)
        if kind == "rar":
            return RarReader(path)
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


def iter_chunks(
    stream: BinaryIO, start: int, length: int, chunk: int = 256 * 1024
) -> Generator[bytes, None, None]:
    """``length`` bytes of ``stream`` from ``start``, in chunks; closes the stream."""
    try:
        if start:
            try:
                stream.seek(start)
            except (OSError, io.UnsupportedOperation):
                remaining_skip = start
                while remaining_skip:
                    skipped = stream.read(min(chunk, remaining_skip))
                    if not skipped:
                        return
                    remaining_skip -= len(skipped)
        remaining = length
        while remaining > 0:
            data = stream.read(min(chunk, remaining))
            if not data:
                return
            remaining -= len(data)
            yield data
    finally:
        stream.close()
