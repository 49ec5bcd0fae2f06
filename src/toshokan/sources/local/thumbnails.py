"""Cover thumbnails for lists: a cover at most 300 px wide, made once and kept on disk.

A search page shows twenty covers at once; sending each at full size (often a
whole 2 MB scan) made lists slow on phones. Details keep the full-size cover.
A thumbnail is made with Pillow the first time it is asked for, from the same
image the cover route serves (a cover file, an archive's first page, a rendered
PDF page), and kept in a size-capped :class:`~toshokan.sdk.archives.DiskCache`
keyed by the cover's version, so a changed cover gets a new thumbnail.
"""

import asyncio
import hashlib
import io
import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PIL import Image, ImageOps, UnidentifiedImageError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from toshokan.sdk import NotFound
from toshokan.sdk.archives import MAX_BUFFERED_BYTES, ArchiveError, DiskCache, open_chapter
from toshokan.sdk.pictures import Picture, bounded_image, narrowed
from toshokan.sources.local.index import Index
from toshokan.sources.local.pages import IMMUTABLE, etag_matches, series_with_cover

#: The widest thumbnail; narrower covers keep their width.
THUMBNAIL_WIDTH = 300
#: Covers above this many pixels are not decoded (a decompression bomb costs gigabytes).
MAX_PIXELS = 60_000_000
JPEG_QUALITY = 82


class CoverUnreadable(Exception):
    """The cover's image cannot be read or decoded."""


def _too_many_pixels(columns: int, rows: int) -> CoverUnreadable:
    return CoverUnreadable(f"cover is {columns} x {rows} pixels")


def thumbnail(data: bytes, width: int = THUMBNAIL_WIDTH) -> bytes:
    """A JPEG at most ``width`` wide, keeping the aspect ratio; transparency on white."""
    try:
        with bounded_image(data, MAX_PIXELS, _too_many_pixels) as image:
            columns, rows = image.size
            if image.format == "JPEG":
                # The shorter side at least ``width``: whichever way the EXIF orientation turns
                # the picture, the decoded draft is still as wide as the thumbnail.
                scale = min(1.0, width / min(columns, rows))
                image.draft("RGB", (math.ceil(columns * scale), math.ceil(rows * scale)))
            image.load()
            # Upright as the EXIF orientation says: the re-encoded JPEG carries no tag.
            rgba = ImageOps.exif_transpose(image).convert("RGBA")
        picture = Image.new("RGB", rgba.size, (255, 255, 255))
        picture.paste(rgba, mask=rgba.getchannel("A"))
        out = io.BytesIO()
        narrowed(picture, width).save(out, "JPEG", quality=JPEG_QUALITY)
        return out.getvalue()
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError) as error:
        raise CoverUnreadable(type(error).__name__) from None


class Thumbnails:
    """The ``/thumbnails/{manga}`` route of one local library."""

    def __init__(
        self,
        *,
        root: Path,
        index: Callable[[], Index],
        cache: DiskCache,
        renders: DiskCache | None = None,
    ):
        self.root = root
        self._index = index
        self.cache = cache
        self.renders = renders
        #: One thumbnail is made at a time: decoding a cover is the memory-hungry part,
        #: and each is made once, so a single thread bounds it without slowing lists.
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="toshokan-thumbnail")
        #: Thumbnails being made, so concurrent requests for one cover make it once.
        self._making: dict[str, asyncio.Future[bytes]] = {}

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def routes(self) -> list[BaseRoute]:
        return [Route("/thumbnails/{manga}", self.serve, methods=["GET"], name="thumbnail")]

    async def serve(self, request: Request) -> Response:
        key, cover = await self._cover_of(request.path_params["manga"])
        etag = '"' + hashlib.sha1(key.encode()).hexdigest()[:24] + '"'
        headers = {"ETag": etag, "Cache-Control": IMMUTABLE}
        if etag_matches(request.headers.get("if-none-match"), etag):
            return Response(status_code=304, headers=headers)
        data = await self._thumbnail(key, *cover)
        return Response(data, media_type="image/jpeg", headers=headers)

    async def read(self, manga: str) -> Picture:
        """The thumbnail :meth:`serve` answers for ``manga``, as bytes."""
        key, cover = await self._cover_of(manga)
        return Picture(await self._thumbnail(key, *cover), "image/jpeg")

    async def _cover_of(self, manga: str) -> tuple[str, tuple[str, str, str | None]]:
        """The thumbnail's key, and where the cover it is made from lies."""
        row = await series_with_cover(self._index, manga)
        cover = (row["cover_relpath"], row["cover_kind"], row["cover_member"])
        return f"{cover}:{row['cover_version']}:{THUMBNAIL_WIDTH}", cover

    async def _thumbnail(self, key: str, relpath: str, kind: str, member: str | None) -> bytes:
        making = self._making.get(key)
        if making is None:
            making = asyncio.ensure_future(self._make(key, relpath, kind, member))
            self._making[key] = making
            making.add_done_callback(lambda done: self._forget(key, done))
        return await asyncio.shield(making)

    def _forget(self, key: str, done: "asyncio.Future[bytes]") -> None:
        self._making.pop(key, None)
        if not done.cancelled():
            done.exception()  # marked retrieved: a waiter that left must not log it as lost

    async def _make(self, key: str, relpath: str, kind: str, member: str | None) -> bytes:
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self._pool, self._cached, key, relpath, kind, member
            )
        except CoverUnreadable:
            raise NotFound("The cover is no longer readable in the library.") from None

    def _cached(self, key: str, relpath: str, kind: str, member: str | None) -> bytes:
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        made = thumbnail(self._read(relpath, kind, member))
        self.cache.put(key, made)
        return made

    def _read(self, relpath: str, kind: str, member: str | None) -> bytes:
        """The cover's bytes, from wherever the cover route would serve them."""
        root = self.root
        try:
            real = (root / relpath).resolve()
            if not real.is_relative_to(root):
                raise CoverUnreadable("outside the library")
            if kind == "file" or member is None:
                with real.open("rb") as stream:
                    data = stream.read(MAX_BUFFERED_BYTES + 1)
                if len(data) > MAX_BUFFERED_BYTES:
                    raise CoverUnreadable("cover file too large")
                return data
            with open_chapter(real, kind, root, renders=self.renders) as reader:
                return reader.read(member, MAX_BUFFERED_BYTES)
        except (OSError, RuntimeError, ArchiveError) as error:
            raise CoverUnreadable(type(error).__name__) from None


def thumbnail_cache(data_dir: Path, slug: str, max_bytes: int) -> DiskCache:
    """Where one library keeps its thumbnails."""
    return DiskCache(data_dir / "local" / f"{slug}-thumbnails", max_bytes)
