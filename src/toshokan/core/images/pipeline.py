"""The pipeline: fetching any source's image once, converting it, caching it, signing links to it.

It works for one :class:`~toshokan.core.visit.Visit` at a time: the source,
its configuration and the caller's authorisation are the visit's, decided once
per request. The host's own URLs (a source's own routes under ``/_/<slug>``) are read by
the source itself (:meth:`~toshokan.sdk.Source.read_image`), with no HTTP
request to the host and no link signed to be checked again; upstream URLs
are fetched with the host's User-Agent and the source's Referer, under the
request's upstream deadline and with a bound on the bytes read.
"""

import asyncio
import functools
import hashlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from toshokan.config import HostSettings
from toshokan.core.images.pictures import THUMBNAIL_WIDTH, stable_key, transform
from toshokan.core.images.sharing import InFlight, MemoryCache, UpstreamGates
from toshokan.core.signing import verify
from toshokan.errors import NotFound, RateLimited, UpstreamError, UpstreamTimeout
from toshokan.sdk.archives import DiskCache
from toshokan.sdk.context import HostServices
from toshokan.sdk.http import UpstreamClient, retry_after_seconds
from toshokan.sdk.pictures import Picture
from toshokan.sdk.source import ImageFetch, OwnPages, Source
from toshokan.sdk.urls import image_message

if TYPE_CHECKING:
    from toshokan.core.visit import Visit

log = logging.getLogger(__name__)

#: The largest image read from anywhere; a bigger one is an upstream error, never memory.
MAX_SOURCE_BYTES = 32 * 1024 * 1024
#: Upstream images kept in memory (as fetched, and as served), in bytes, and for how long (seconds).
MEMORY_BYTES = 64 * 1024 * 1024
MEMORY_SECONDS = 300
#: Converted and resized images kept on disk, in bytes.
DISK_BYTES = 512 * 1024 * 1024
#: Seconds a chapter's page list is remembered for the caller who asked.
PAGE_LIST_SECONDS = 120
#: Concurrent fetches from one upstream host.
PER_UPSTREAM = 8
#: Upstream hosts (MangaDex has many at-home servers) whose bound is remembered at once.
MAX_UPSTREAM_GATES = 256


class ImagePipeline:
    """Fetching, converting, resizing and caching images for every face of one host."""

    def __init__(self, settings: HostSettings, services: HostServices):
        self.settings = settings
        self.services = services
        self.deadline = settings.server.upstream_timeout
        self.upstream: UpstreamClient = services.http_client(
            timeout=self.deadline,
            retries=0,
            headers={"Accept": "image/jpeg,image/png,image/gif,image/webp,image/avif,image/*"},
        )
        self.memory = MemoryCache(MEMORY_BYTES, MEMORY_SECONDS)
        self.disk = DiskCache(
            Path(settings.host.data_dir) / "image-cache", DISK_BYTES, suffix=".jpg"
        )
        self._fetches = InFlight()
        self._renders = InFlight()
        self._gates = UpstreamGates(PER_UPSTREAM, MAX_UPSTREAM_GATES)

    # -- images ------------------------------------------------------------------------

    async def render(
        self, visit: "Visit", url: str, *, width: int | None = None, as_jpeg: bool = False
    ) -> Picture:
        """The image at ``url`` (of the visit's source) in a PSE format (JPEG when ``as_jpeg``),
        upright, at most ``width`` wide."""
        own_path = self._own_path(visit, url)

        async def read() -> Picture:
            if own_path is not None:
                return await self._read_own(visit, own_path)
            return await self._fetch_upstream_once(visit, url)

        # An upstream image is kept in memory as served; the source's own are read again.
        return await self._rendered(
            f"{visit.slug}\n{stable_key(url)}", read, width, as_jpeg, remember=own_path is None
        )

    async def render_own(
        self,
        visit: "Visit",
        pages: OwnPages,
        number: int,
        *,
        width: int | None = None,
        as_jpeg: bool = False,
    ) -> Picture:
        """Page ``number`` of ``pages`` (a chapter the visit's source reads itself) as
        :meth:`render` gives an image: read by the source, no URL built to be parsed back."""

        async def read() -> Picture:
            async with visit.deadline():
                picture = await pages.read(number)
            return _bounded(picture)

        key = f"{visit.slug}\nown\n{pages.key}\n{number}"
        return await self._rendered(key, read, width, as_jpeg, remember=False)

    async def _rendered(
        self,
        name: str,
        read: Callable[[], Awaitable[Picture]],
        width: int | None,
        as_jpeg: bool,
        *,
        remember: bool,
    ) -> Picture:
        """The image ``read`` gives, converted and resized, kept on disk when converted (and in
        memory as served, when ``remember``); one render of one image at a time."""
        key = f"{name}\n{width or 0}\n{'jpeg' if as_jpeg else ''}"
        disk_key = hashlib.sha256(key.encode()).hexdigest()
        # An upstream image as it was served a moment ago: no thread for the disk or the decoder.
        served = self.memory.get(disk_key)
        if served is not None:
            return served

        async def compute() -> Picture:
            cached = await asyncio.to_thread(self.disk.get, disk_key)
            if cached is not None:
                picture = Picture(cached, "image/jpeg")
            else:
                raw = await read()
                picture, converted = await asyncio.to_thread(
                    functools.partial(transform, raw.data, width, as_jpeg=as_jpeg)
                )
                if converted:
                    await asyncio.to_thread(self.disk.put, disk_key, picture.data)
            if remember:
                self.memory.put(disk_key, picture)
            return picture

        return await self._renders.run(disk_key, compute)

    async def _fetch_upstream_once(self, visit: "Visit", url: str) -> Picture:
        """The upstream's bytes at ``url``: kept a few minutes, one fetch for concurrent asks."""
        key = f"{visit.slug}\n{stable_key(url)}"
        cached = self.memory.get(key)
        if cached is not None:
            return cached

        async def download() -> Picture:
            picture = await self._fetch_upstream(visit, url)
            self.memory.put(key, picture)
            return picture

        return await self._fetches.run(key, download)

    def _own_path(self, visit: "Visit", url: str) -> str | None:
        """The path of ``url`` when it is one of the source's own routes on this host."""
        parts = urlsplit(url)
        origins = {visit.caller.base_url.rstrip("/"), (self.services.public_url or "").rstrip("/")}
        origin = f"{parts.scheme}://{parts.netloc}"
        prefix = f"{visit.source.mount.path}/"
        if not parts.path.startswith(prefix) or (parts.scheme and origin not in origins):
            return None
        return parts.path

    async def _read_own(self, visit: "Visit", path: str) -> Picture:
        # The visit authorised the caller (or a signed link did): the source reads the image
        # as its route would, without the route's signature check.
        ctx = visit.context(await visit.access())
        async with visit.deadline():
            picture = await visit.source.read_image(path, ctx)
        if picture is None:
            raise NotFound("The source serves no image at this address.")
        return _bounded(picture)

    async def _fetch_upstream(self, visit: "Visit", url: str) -> Picture:
        async with self._upstream_within(visit, url) as image:
            body = bytearray()
            async for chunk in image.chunks:
                body += chunk
        return Picture(bytes(body), image.media_type)

    @asynccontextmanager
    async def original(self, visit: "Visit", url: str) -> AsyncIterator[AsyncIterator[bytes]]:
        """The image at ``url`` of the visit's source, byte for byte as its source gives it, as
        it arrives: for kept copies. Within the visit's deadline, like a reader's page."""
        own_path = self._own_path(visit, url)
        if own_path is not None:
            picture = await self._read_own(visit, own_path)
            yield _once(picture.data)
            return
        async with self._upstream_within(visit, url) as image:
            yield image.chunks

    @asynccontextmanager
    async def _upstream_within(self, visit: "Visit", url: str) -> AsyncIterator["UpstreamImage"]:
        """:meth:`upstream_image` within the visit's deadline, for its source."""
        try:
            async with (
                visit.deadline(),
                self.upstream_image(visit.source, url, visit.config.referer) as image,
            ):
                yield image
        except TimeoutError:
            raise UpstreamTimeout(
                f"The image server did not answer within {self.deadline:g} s."
            ) from None

    @asynccontextmanager
    async def upstream_image(
        self, source: Source[Any], url: str, referer: str | None
    ) -> AsyncIterator["UpstreamImage"]:
        """The image at the upstream ``url`` of ``source``, its body read as it arrives and
        bounded, for the page proxy and for kept copies alike; the source is told how the
        fetch went (:meth:`~toshokan.sdk.Source.image_fetched`) once it ended.

        The caller bounds the time (a request's deadline); failures are the spec's errors.
        """
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise NotFound("The image URL is not one the host can fetch.")
        headers = {"Referer": referer} if referer else {}
        started = time.perf_counter()
        image: UpstreamImage | None = None
        try:
            async with (
                self._gates.hold(parts.netloc),
                self.upstream.stream("GET", url, headers=headers) as response,
            ):
                image = UpstreamImage(response)
                _check_status(response)
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > MAX_SOURCE_BYTES:
                    raise UpstreamError(_too_big())
                yield image
        except httpx.TimeoutException:
            raise UpstreamTimeout(
                f"The image server did not answer within {self.deadline:g} s."
            ) from None
        except httpx.TransportError as error:
            raise UpstreamError(
                f"The image server could not be reached: {type(error).__name__}."
            ) from None
        finally:
            fetch = ImageFetch(
                url,
                success=image is not None and image.complete,
                size=0 if image is None else image.size,
                seconds=time.perf_counter() - started,
                headers={} if image is None else dict(image.headers),
            )
            try:
                source.image_fetched(fetch)
            except Exception:  # a source's bookkeeping never fails a page
                log.exception("source %s failed to note an image fetch", source.slug)

    # -- links -----------------------------------------------------------------------------

    def signed_url(
        self,
        base_url: str,
        slug: str,
        url: str,
        *,
        width: int | None = None,
        thumbnail: bool = False,
    ) -> str:
        """A header-free, expiring host link to the image ``url`` of source ``slug``."""
        shown_width = THUMBNAIL_WIDTH if thumbnail else width
        return self.services.urls(base_url).image(slug, url, shown_width)

    def verify(self, slug: str, query: dict[str, str]) -> int:
        """The expiry of a genuine, unexpired link's query; ``INVALID_CREDENTIALS`` otherwise."""
        return verify(
            self.services.secret,
            image_message(slug, query.get("u", ""), query.get("w", "")),
            query.get("exp", ""),
            query.get("sig", ""),
        )


class UpstreamImage:
    """An upstream image being read: its media type and headers, its body as it arrives (at
    most :data:`MAX_SOURCE_BYTES`), and how much of it came."""

    def __init__(self, response: httpx.Response):
        self.headers = response.headers
        self.media_type = response.headers.get("content-type", "application/octet-stream")
        self.size = 0
        #: Whether the whole body was read.
        self.complete = False
        self._response = response

    @property
    def chunks(self) -> AsyncIterator[bytes]:
        return self._read()

    async def _read(self) -> AsyncIterator[bytes]:
        async for chunk in self._response.aiter_bytes():
            self.size += len(chunk)
            if self.size > MAX_SOURCE_BYTES:
                raise UpstreamError(_too_big())
            yield chunk
        self.complete = True


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


def _bounded(picture: Picture) -> Picture:
    if len(picture.data) > MAX_SOURCE_BYTES:
        raise UpstreamError(_too_big())
    return picture


def _too_big() -> str:
    return f"The image is larger than {MAX_SOURCE_BYTES // (1024 * 1024)} MiB."


def _check_status(response: httpx.Response) -> None:
    status = response.status_code
    if response.is_success:
        return
    if status in (404, 410):
        raise NotFound("The image server has no such image.")
    if status == 429:
        raise RateLimited(
            "The image server is rate-limiting the host.", retry_after=retry_after_seconds(response)
        )
    raise UpstreamError(f"The image server answered HTTP {status}.")
