"""The routes that serve page images, covers and the icon, mounted under ``/_/<slug>/``.

Images are streamed straight out of their archive (small ones read whole in a
worker thread, large ones in chunks), never extracted to disk (BMP and TIFF
pages, which readers do not all display, are served converted to PNG), with the
headers image loaders and caches expect: a strong ETag, Last-Modified,
``Accept-Ranges`` and single-range ``Range`` requests (206/416), conditional
requests (304). The host guards these routes when the library requires
authentication (signed links or credentials) and builds their links.
Every path is checked to lie inside the library root before anything is opened.
"""

import asyncio
import email.utils
import errno
import hashlib
import io
import json
import os
import sqlite3
from collections.abc import AsyncIterator, Callable, Generator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO, TypeVar
from urllib.parse import quote

from PIL import Image, ImageDraw
from starlette.concurrency import iterate_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from toshokan.sdk import (
    ChapterNotFound,
    InvalidRequest,
    MangaNotFound,
    NotFound,
    OwnPages,
    Picture,
    UpstreamError,
    public,
)
from toshokan.sdk.archives import (
    ArchiveError,
    ChapterReader,
    DiskCache,
    TooLarge,
    UnusualZip,
    ZipDirectoryCache,
    ZipPages,
    displayable,
    iter_chunks,
    kind_of,
    limits,
    needs_conversion,
    open_chapter,
    sniff_media_type,
)
from toshokan.sdk.names import media_type as image_type
from toshokan.sources.local.folder_cbz import CBZ, folder_cbz
from toshokan.sources.local.index import Index
from toshokan.sources.local.slugs import is_slug
from toshokan.sources.local.versions import version_of

#: Entries up to this size are read whole (one thread hop); larger ones are streamed.
WHOLE_READ_LIMIT = 2 * 1024 * 1024
IMMUTABLE = "public, max-age=31536000, immutable"
#: Threads serving archive work for one library.
ARCHIVE_WORKERS = 4

T = TypeVar("T")
#: Where a page or cover lies: the file, its kind, the member inside it, its version.
_Found = tuple[str, str, str | None, str | None]


class RangeNotSatisfiable(InvalidRequest):
    status, default_message = 416, "The requested byte range is outside the image."


class DamagedPage(UpstreamError):
    """A page (or cover) whose bytes are no image, or that its archive cannot give whole.

    The library's files are this source's upstream, so the spec's UPSTREAM_ERROR (502):
    a reader shows that one page as damaged, instead of a broken image answered 200."""

    default_message = "This page is damaged: its bytes are not an image it can show."


def parse_range(header: str, size: int) -> tuple[int, int] | None:
    """``(start, end)`` inclusive for a single ``bytes=`` range; None to send the whole image.

    Raises :class:`RangeNotSatisfiable` when the range starts past the end.
    """
    unit, _, spec = header.partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None  # other units or multiple ranges: a full 200 is a valid answer
    first, dash, last = spec.strip().partition("-")
    if not dash or (first and not _ascii_digits(first)) or (last and not _ascii_digits(last)):
        return None
    if not first:
        if not last:
            return None
        length = int(last)
        if length == 0 or size == 0:
            raise _unsatisfiable(size)
        return max(0, size - length), size - 1
    start = int(first)
    end = int(last) if last else size - 1
    if start >= size:
        raise _unsatisfiable(size)
    if end < start:
        return None
    return start, min(end, size - 1)


def _ascii_digits(text: str, max_length: int = 18) -> bool:
    """Only ``0-9`` (``str.isdigit`` also accepts ``²`` and other digits ``int`` refuses)."""
    return 0 < len(text) <= max_length and text.isascii() and text.isdigit()


def _unsatisfiable(size: int) -> RangeNotSatisfiable:
    return RangeNotSatisfiable(headers={"Content-Range": f"bytes */{size}"})


#: What a chapter file is, by extension: the types comic readers recognise for a download.
ARCHIVE_TYPES: dict[str, str] = {
    ".cbz": "application/vnd.comicbook+zip",
    ".zip": "application/zip",
    ".cbr": "application/vnd.comicbook-rar",
    ".rar": "application/vnd.rar",
    ".cb7": "application/x-cb7",
    ".7z": "application/x-7z-compressed",
    ".pdf": "application/pdf",
    ".epub": "application/epub+zip",
}


#: What a chapter file is when its bytes say otherwise than its extension (a zip named .cbr).
KIND_TYPES: dict[str, str] = {
    "zip": ARCHIVE_TYPES[".cbz"],
    "rar": ARCHIVE_TYPES[".cbr"],
    "7z": ARCHIVE_TYPES[".cb7"],
}


def archive_media_type(relpath: str, kind: str | None = None) -> str | None:
    """The media type of a chapter kept as one file; None for a folder of images.

    ``kind`` is the container the scan found the file to be: when the extension names
    another, the bytes win (an app opening a .cbr that is a zip must be told zip)."""
    suffix = PurePosixPath(relpath).suffix.lower()
    if kind is not None and kind in KIND_TYPES and kind_of(relpath) != kind:
        return KIND_TYPES[kind]
    return ARCHIVE_TYPES.get(suffix)


def scanned_size(sig: str) -> int | None:
    """The file's size when it was last scanned, from its ``size:mtime`` signature."""
    size, colon, mtime = sig.partition(":")
    return int(size) if colon and _ascii_digits(size) and mtime.isdigit() else None


def content_disposition(filename: str) -> str:
    """``attachment`` with the file's own name: an ASCII fallback and the exact UTF-8 one."""
    fallback = "".join(
        c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in filename
    )
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


def _icon_png() -> bytes:
    image = Image.new("RGBA", (128, 128), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((8, 8, 120, 120), radius=20, fill=(38, 70, 120, 255))
    draw.rectangle((30, 28, 62, 100), fill=(245, 240, 225, 255))
    draw.rectangle((66, 28, 98, 100), fill=(245, 240, 225, 255))
    draw.line((64, 26, 64, 102), fill=(20, 30, 50, 255), width=4)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


@dataclass
class _Opened:
    reader: ChapterReader | None
    stream: BinaryIO
    size: int
    mtime: float
    head: bytes | None  # the whole image when it was small enough to read at once


async def series_with_cover(index: Callable[[], Index], manga: str) -> sqlite3.Row:
    """The index row of series ``manga``, which must have a cover (else not found)."""
    if not is_slug(manga):
        raise MangaNotFound()
    row = await asyncio.to_thread(lambda: index().series_by_slug(manga))
    if row is None:
        raise MangaNotFound()
    if not row["cover_relpath"]:
        raise NotFound("This manga has no cover.")
    return row


class PageServer:
    """Page, cover and icon routes of one local library source."""

    def __init__(
        self,
        *,
        root: Path,
        index: Callable[[], Index],
        workers: int = ARCHIVE_WORKERS,
        renders: DiskCache | None = None,
    ):
        self.root = root
        #: Rendered PDF pages, kept so a page is rendered once.
        self.renders = renders
        self._index = index
        self._icon: bytes | None = None
        #: Archive work (opening, decompressing, reading chunks) runs here, never in the
        #: pool searches use, so slow archives cannot starve them; ``workers`` bounds it.
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="toshokan-archive")
        self._zips = ZipDirectoryCache()
        #: Plain zips' directories, for a page read without a ZipFile (the usual case).
        self._zip_pages = ZipPages()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._zips.clear()
        self._zip_pages.clear()

    async def _in_pool(self, call: Callable[..., T], *args: object) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, call, *args)

    def routes(self) -> list[BaseRoute]:
        return [
            public(Route("/icon.png", self.icon, methods=["GET"], name="icon")),
            Route("/covers/{manga}", self.cover, methods=["GET"], name="cover"),
            Route("/pages/{manga}/{chapter}/{number}", self.page, methods=["GET"], name="page"),
            Route("/download/{manga}/{chapter}", self.download, methods=["GET"], name="download"),
        ]

    # -- handlers --------------------------------------------------------------------

    async def icon(self, request: Request) -> Response:
        if self._icon is None:
            self._icon = await asyncio.to_thread(_icon_png)
        etag = '"' + hashlib.sha1(self._icon).hexdigest()[:24] + '"'
        headers = {"ETag": etag, "Cache-Control": "public, max-age=86400"}
        if etag_matches(request.headers.get("if-none-match"), etag):
            return Response(status_code=304, headers=headers)
        return Response(self._icon, media_type="image/png", headers=headers)

    async def cover(self, request: Request) -> Response:
        return await self._serve(request, *await self._cover_of(request.path_params["manga"]))

    async def page(self, request: Request) -> Response:
        params = request.path_params
        manga, chapter, number = params["manga"], params["chapter"], params["number"]
        _check_page_path(manga, chapter, number)
        # Finding the page in the index and opening it are one trip to the pool, not two:
        # each trip is a wake-up of another thread and of the event loop.
        (relpath, _, member, version), opened = await self._in_pool(
            self._open_page, manga, chapter, number
        )
        return self._respond(request, opened, relpath, member, version)

    async def read_image(self, route: str, params: Mapping[str, str]) -> Picture | None:
        """What the route named ``route`` serves with these path parameters, read whole:
        a page or a cover, as readers display it; None for the other routes."""
        if route == "page":
            found = await self._page_of(params["manga"], params["chapter"], params["number"])
        elif route == "cover":
            found = await self._cover_of(params["manga"])
        else:
            return None
        return await self._in_pool(self._read_displayed, *found)

    def own_pages(self, row: sqlite3.Row) -> OwnPages:
        """The pages of the chapter of index row ``row``, each read as the page route reads it."""
        names: list[str] = json.loads(row["pages"])
        relpath, kind, version = row["relpath"], row["kind"], version_of(row["sig"])

        async def read(number: int) -> Picture:
            found = (relpath, kind, names[number - 1], version)
            return await self._in_pool(self._read_displayed, *found)

        key = f"{row['series_slug']}/{row['slug']}/{version}"
        return OwnPages(len(names), key, read)

    async def _cover_of(self, manga: str) -> _Found:
        row = await series_with_cover(self._index, manga)
        return row["cover_relpath"], row["cover_kind"], row["cover_member"], row["cover_version"]

    async def _page_of(self, manga: str, chapter: str, number: str) -> _Found:
        _check_page_path(manga, chapter, number)
        return await asyncio.to_thread(self._find_page, manga, chapter, number)

    def _find_page(self, manga: str, chapter: str, number: str) -> _Found:
        row = self._index().page_source(manga, chapter)
        if row is None:
            raise ChapterNotFound()
        pages = json.loads(row["pages"])
        index = int(number)
        if not 1 <= index <= len(pages):
            raise NotFound(f"This chapter has pages 1 to {len(pages)}.")
        return row["relpath"], row["kind"], pages[index - 1], version_of(row["sig"])

    def _open_page(self, manga: str, chapter: str, number: str) -> tuple[_Found, _Opened]:
        found = self._find_page(manga, chapter, number)
        return found, self._open_displayed(*found)

    async def download(self, request: Request) -> Response:
        """The chapter's archive (or PDF) as it lies in the library, byte for byte."""
        manga = request.path_params["manga"]
        chapter = request.path_params["chapter"]
        if not (is_slug(manga) and is_slug(chapter)):
            raise NotFound("No chapter is at this path.")
        row = await asyncio.to_thread(lambda: self._index().chapter(manga, chapter))
        if row is None:
            raise ChapterNotFound()
        relpath: str = row["relpath"]
        if row["kind"] == "dir":
            return await self._folder_download(relpath, json.loads(row["pages"]))
        file_type = archive_media_type(relpath, row["kind"])
        if file_type is None:
            raise NotFound("This chapter has no file to download.")
        disposition = content_disposition(PurePosixPath(relpath).name)
        return await self._serve(
            request,
            relpath,
            "file",
            None,
            version_of(row["sig"]),
            media_type=file_type,
            headers={"Content-Disposition": disposition},
        )

    async def _folder_download(self, relpath: str, pages: list[str]) -> Response:
        """A folder of images as one CBZ (:mod:`toshokan.sources.local.folder_cbz`)."""
        size, chunks = await self._in_pool(folder_cbz, self.root, relpath, pages)
        name = f"{PurePosixPath(relpath).name}.cbz"
        return StreamingResponse(
            iterate_in_threadpool(chunks),
            media_type=CBZ,
            headers={
                "Content-Disposition": content_disposition(name),
                "Content-Length": str(size),
                "Cache-Control": IMMUTABLE,
            },
        )

    # -- serving -------------------------------------------------------------------------

    def _open(self, relpath: str, kind: str, member: str | None) -> _Opened:
        real = self._real_path(relpath)
        try:
            stat = os.stat(real)
        except OSError as error:
            if error.errno == errno.ELOOP:  # a symlink loop: no file in the library
                raise NotFound("The image is no longer in the library.") from None
            raise NotFound("The image is no longer readable in the library.") from None
        try:
            if kind == "file" or member is None:
                stream: BinaryIO = open(real, "rb")  # noqa: SIM115 - closed with its answer
                size = stat.st_size
                head = stream.read(WHOLE_READ_LIMIT + 1) if size <= WHOLE_READ_LIMIT else None
                if head is not None:
                    stream.close()
                return _Opened(None, stream, size, _clamped(stat.st_mtime), head)
            if kind == "zip":
                data = self._plain_zip_page(Path(real), stat, member)
                if data is not None:
                    return _Opened(None, io.BytesIO(data), len(data), _clamped(stat.st_mtime), data)
                reader: ChapterReader = self._zips.open(Path(real), stat.st_size, stat.st_mtime_ns)
            else:
                reader = open_chapter(Path(real), kind, self.root, renders=self.renders)
        except (OSError, ArchiveError):
            raise NotFound("The image is no longer readable in the library.") from None
        try:
            size = reader.size(member)
        except ArchiveError:
            reader.close()
            raise NotFound("The image is no longer in its chapter.") from None
        try:
            if size <= WHOLE_READ_LIMIT:
                data = reader.read(member, WHOLE_READ_LIMIT)
                reader.close()
                return _Opened(None, io.BytesIO(data), len(data), _clamped(stat.st_mtime), data)
            return _Opened(reader, reader.open(member), size, _clamped(stat.st_mtime), None)
        except TooLarge:
            reader.close()
            raise NotFound("The image is too large to serve.") from None
        except ArchiveError as error:  # listed, but its bytes cannot be had (a bad CRC...)
            reader.close()
            raise DamagedPage(f"This page is damaged: {error}.") from None

    def _real_path(self, relpath: str) -> str:
        """The file's path with every link followed, which must lie inside the library root.

        As ``Path.resolve`` and ``is_relative_to`` do it, on strings: half the cost."""
        root = str(self.root)
        real = os.path.realpath(os.path.join(root, relpath))
        inside = root if root.endswith("/") else root + "/"
        if real != root and not real.startswith(inside):
            raise NotFound("The image is no longer in the library.")
        return real

    def _plain_zip_page(self, path: Path, stat: os.stat_result, member: str) -> bytes | None:
        """The page read off a plain zip's kept directory; None when ``ZipReader`` must
        read it (whose answer, or error, is then the one given)."""
        try:
            return self._zip_pages.read(
                path, stat.st_size, stat.st_mtime_ns, member, WHOLE_READ_LIMIT
            )
        except (UnusualZip, OSError):
            return None

    def _open_displayed(
        self, relpath: str, kind: str, member: str | None, version: str | None
    ) -> _Opened:
        """A page or cover as readers display it: BMP and TIFF read whole and served as PNG.

        A converted page is kept with the rendered PDF pages, so it is converted once.
        """
        opened = self._open(relpath, kind, member)
        declared = image_type(member or relpath)
        if opened.head is not None and sniff_media_type(opened.head[:16]) is None:
            _close(opened)
            raise DamagedPage()
        if not needs_conversion(opened.head or b"", declared):
            return opened
        key = f"displayable\n{version}\n{relpath}\n{member}"
        converted = self.renders.get(key) if self.renders is not None else None
        try:
            if converted is None:
                bound = limits.MAX_BUFFERED_BYTES
                data = opened.head if opened.head is not None else opened.stream.read(bound + 1)
                if max(opened.size, len(data)) > bound:
                    raise TooLarge("too large to convert")
                converted, _ = displayable(data, declared)
                if self.renders is not None:
                    self.renders.put(key, converted)
        except TooLarge:
            raise NotFound("The page is too large to convert.") from None
        except ArchiveError:
            raise DamagedPage(
                "This page is damaged: it cannot be converted to a format readers show."
            ) from None
        finally:
            _close(opened)
        return _Opened(None, io.BytesIO(converted), len(converted), opened.mtime, converted)

    def _read_displayed(
        self, relpath: str, kind: str, member: str | None, version: str | None
    ) -> Picture:
        opened = self._open_displayed(relpath, kind, member, version)
        try:
            bound = limits.MAX_BUFFERED_BYTES + 1
            data = opened.head if opened.head is not None else opened.stream.read(bound)
        finally:
            _close(opened)
        return Picture(data, sniff_media_type(data[:16]) or image_type(member or relpath))

    async def _serve(
        self,
        request: Request,
        relpath: str,
        kind: str,
        member: str | None,
        version: str | None,
        *,
        media_type: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        if media_type is None:  # a page or cover, for readers to display
            opened = await self._in_pool(self._open_displayed, relpath, kind, member, version)
        else:  # a download, byte for byte
            opened = await self._in_pool(self._open, relpath, kind, member)
        return self._respond(
            request, opened, relpath, member, version, media_type=media_type, headers=headers
        )

    def _respond(
        self,
        request: Request,
        opened: _Opened,
        relpath: str,
        member: str | None,
        version: str | None,
        *,
        media_type: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        """The answer with ``opened``'s bytes: 200, 206 for a range, 304 when the reader has them."""
        etag = '"' + hashlib.sha1(f"{version}:{relpath}:{member}".encode()).hexdigest()[:24] + '"'
        headers = {
            **(headers or {}),
            "ETag": etag,
            "Last-Modified": email.utils.formatdate(opened.mtime, usegmt=True),
            "Cache-Control": IMMUTABLE,
            "Accept-Ranges": "bytes",
        }
        if _not_modified(request, etag, opened.mtime):
            _close(opened)
            return Response(status_code=304, headers=headers)
        kind_type = sniff_media_type(opened.head[:16]) if opened.head else None
        content_type = media_type or kind_type or image_type(member or relpath)
        size = opened.size
        wanted = request.headers.get("range")
        if_range = request.headers.get("if-range")
        if wanted and if_range and if_range.strip() not in (etag, headers["Last-Modified"]):
            wanted = None
        span: tuple[int, int] | None = None
        if wanted:
            try:
                span = parse_range(wanted, size)
            except RangeNotSatisfiable:
                _close(opened)
                raise
        status = 200
        start, end = 0, size - 1
        if span is not None:
            start, end = span
            status = 206
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
        length = max(0, end - start + 1)
        headers["Content-Length"] = str(length)
        if opened.head is not None:
            return Response(
                opened.head[start : end + 1],
                status_code=status,
                media_type=content_type,
                headers=headers,
            )
        return StreamingResponse(
            self._stream(opened, start, length),
            status_code=status,
            media_type=content_type,
            headers=headers,
        )

    async def _stream(self, opened: _Opened, start: int, length: int) -> AsyncIterator[bytes]:
        """The body, each chunk read in the archive pool."""
        chunks = iter_chunks(opened.stream, start, length)
        try:
            while True:
                chunk = await self._in_pool(next, chunks, None)
                if chunk is None:
                    return
                yield chunk
        finally:
            await self._in_pool(_close_all, chunks, opened)


def _close_all(chunks: Generator[bytes, None, None], opened: _Opened) -> None:
    chunks.close()
    _close(opened)


def _close(opened: _Opened) -> None:
    try:
        opened.stream.close()
    finally:
        if opened.reader is not None:
            opened.reader.close()


def _check_page_path(manga: str, chapter: str, number: str) -> None:
    if not (is_slug(manga) and is_slug(chapter)) or not _ascii_digits(number, 6):
        raise NotFound("No page is at this path.")


def _clamped(mtime: float) -> float:
    """A file time HTTP dates can express (a file dated in the year 40000 exists)."""
    return min(max(mtime, 0.0), 253402300799.0) if mtime == mtime else 0.0


def etag_matches(header: str | None, etag: str) -> bool:
    """Whether ``If-None-Match`` names ``etag`` (weak or strong, or ``*``): the pages, the icon and
    the thumbnails (:mod:`~toshokan.sources.local.thumbnails`) answer 304 by it alike."""
    if not header:
        return False
    tags = [t.strip().removeprefix("W/") for t in header.split(",")]
    return "*" in tags or etag in tags


def _not_modified(request: Request, etag: str, mtime: float) -> bool:
    if_none_match = request.headers.get("if-none-match")
    if if_none_match is not None:
        return etag_matches(if_none_match, etag)
    since = request.headers.get("if-modified-since")
    if since:
        try:
            parsed = email.utils.parsedate_to_datetime(since)
        except (TypeError, ValueError):
            return False
        return int(mtime) <= parsed.timestamp()
    return False


__all__ = [
    "DamagedPage",
    "PageServer",
    "RangeNotSatisfiable",
    "archive_media_type",
    "content_disposition",
    "parse_range",
    "scanned_size",
]
