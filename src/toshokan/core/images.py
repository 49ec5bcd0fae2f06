"""The image pipeline: the one place every face gets page images and covers from.

A page or cover URL of any source is either one of the host's own (a route a
source mounts under ``/_/<slug>``, such as the local library's pages) or an
upstream's (MangaDex's at-home servers). The pipeline fetches either kind the
same way for every face: host URLs are answered in-process by the source's
mounted routes, upstream URLs with the host's User-Agent and the source's
Referer, under the host's upstream deadline and with a bound on the bytes read.

It then hands back something every reader can show: formats OPDS-PSE does not
allow (WebP, AVIF...) become JPEG; a ``max_width`` resizes keeping the aspect
ratio (never enlarging); thumbnails are at most 300 px wide. Images with more
pixels than :data:`MAX_PIXELS` are refused before they are decoded, so a
decompression bomb costs nothing.

Upstream bytes are kept briefly in memory (bounded in bytes) and concurrent
requests for the same image share one fetch; converted or resized images are
kept on disk under the data directory, with a size cap. Page lists are
remembered for a couple of minutes per caller, so a reader fetching a chapter
page by page asks the source for the list once, not once per page (MangaDex
allows only 40 page lists a minute).

:meth:`ImagePipeline.signed_url` makes a header-free link to any image of any
source (``/_/image/<slug>?u=...&exp=...&sig=...``): only the host can make
one, it expires, and it needs no credentials, for image loaders that cannot
send the headers an upstream wants.
"""

import asyncio
import hashlib
import io
import logging
import time
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
from PIL import Image, UnidentifiedImageError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

from toshokan.core.core import Caller, Core
from toshokan.core.http import caller_of
from toshokan.core.signing import expiry, sign, verify
from toshokan.core.sources import HostedSource
from toshokan.errors import (
    InvalidRequest,
    NotFound,
    RateLimited,
    UpstreamError,
    UpstreamTimeout,
)
from toshokan.sdk.archives import DiskCache
from toshokan.sdk.http import UpstreamClient, retry_after_seconds

log = logging.getLogger("toshokan.images")
T = TypeVar("T")

#: The largest image read from anywhere; a bigger one is an upstream error, never memory.
MAX_SOURCE_BYTES = 32 * 1024 * 1024
#: More pixels than this (a 1,000 x 60,000 webtoon strip) is refused before decoding.
MAX_PIXELS = 60_000_000
#: Thumbnails (covers in a feed) are at most this wide.
THUMBNAIL_WIDTH = 300
#: A requested width is clamped into this range.
MIN_WIDTH, MAX_WIDTH = 16, 8192
#: Upstream images kept in memory, in bytes, and for how long (seconds).
MEMORY_BYTES = 64 * 1024 * 1024
MEMORY_SECONDS = 300
#: Converted and resized images kept on disk, in bytes.
DISK_BYTES = 512 * 1024 * 1024
#: Seconds a chapter's page list is remembered for the caller who asked.
PAGE_LIST_SECONDS = 120
PAGE_LIST_ENTRIES = 1024
#: Concurrent fetches from one upstream host.
PER_UPSTREAM = 8
#: Upstream hosts (MangaDex has many at-home servers) whose bound is remembered at once.
MAX_UPSTREAM_GATES = 256
#: The longest image URL a signed link may carry.
MAX_URL_LENGTH = 4096
JPEG_QUALITY = 85
#: The formats OPDS-PSE allows, served as they are when no resize is asked for.
ALLOWED = {"JPEG": "image/jpeg", "PNG": "image/png", "GIF": "image/gif"}
#: Query parameters of the host's own signed links: they change every minute, the image does not.
SIGNATURE_PARAMS = frozenset({"exp", "sig"})


@dataclass(frozen=True)
class Picture:
    """Image bytes and their media type."""

    data: bytes
    media_type: str


class _InFlight:
    """Concurrent calls with the same key share one computation."""

    def __init__(self) -> None:
        self._running: dict[Hashable, asyncio.Future[Any]] = {}

    async def run(self, key: Hashable, compute: Callable[[], Awaitable[T]]) -> T:
        future = self._running.get(key)
        if future is None:
            future = asyncio.ensure_future(compute())
            self._running[key] = future
            future.add_done_callback(lambda done: self._finished(key, done))
        result: T = await asyncio.shield(future)
        return result

    def _finished(self, key: Hashable, done: asyncio.Future[Any]) -> None:
        self._running.pop(key, None)
        if not done.cancelled():
            done.exception()  # retrieved, so a failure nobody awaited any more is not logged


class _Gates:
    """At most ``per_key`` holders per upstream host; idle hosts are forgotten past ``max_keys``."""

    def __init__(self, per_key: int, max_keys: int):
        self.per_key, self.max_keys = per_key, max_keys
        self._gates: dict[str, tuple[asyncio.Semaphore, list[int]]] = {}

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        if key not in self._gates and len(self._gates) >= self.max_keys:
            for idle in [k for k, (_, users) in self._gates.items() if not users[0]]:
                del self._gates[idle]
        gate, users = self._gates.setdefault(key, (asyncio.Semaphore(self.per_key), [0]))
        users[0] += 1
        try:
            async with gate:
                yield
        finally:
            users[0] -= 1


class _MemoryCache:
    """An LRU of pictures bounded in bytes, each kept for a limited time."""

    def __init__(self, max_bytes: int, seconds: float):
        self.max_bytes, self.seconds = max_bytes, seconds
        self._items: OrderedDict[str, tuple[float, Picture]] = OrderedDict()
        self.size = 0

    def get(self, key: str) -> Picture | None:
        item = self._items.get(key)
        if item is None:
            return None
        if item[0] < time.monotonic():
            self._drop(key)
            return None
        self._items.move_to_end(key)
        return item[1]

    def put(self, key: str, picture: Picture) -> None:
        if len(picture.data) > self.max_bytes // 4:
            return  # one huge image must not flush everything else
        self._drop(key)
        self._items[key] = (time.monotonic() + self.seconds, picture)
        self.size += len(picture.data)
        while self.size > self.max_bytes:
            self._drop(next(iter(self._items)))

    def _drop(self, key: str) -> None:
        item = self._items.pop(key, None)
        if item is not None:
            self.size -= len(item[1].data)


def transform(data: bytes, width: int | None) -> tuple[Picture, bool]:
    """A picture every PSE reader shows, at most ``width`` wide; and whether it was re-encoded.

    Runs in a worker thread: decoding and resizing are CPU work.
    """
    try:
        with Image.open(io.BytesIO(data)) as image:
            columns, rows = image.size
            if columns * rows > MAX_PIXELS:
                raise UpstreamError(
                    f"The image is {columns} x {rows} pixels; the host decodes at most "
                    f"{MAX_PIXELS // 1_000_000} million."
                )
            allowed = ALLOWED.get(image.format or "")
            if allowed and (width is None or columns <= width):
                return Picture(data, allowed), False
            if width is not None and columns > width and image.format == "JPEG":
                image.draft("RGB", (width, max(1, rows * width // columns)))
            image.load()
            picture = _to_rgb(image)
            if width is not None and picture.width > width:
                height = max(1, round(picture.height * width / picture.width))
                picture = picture.resize((width, height), Image.Resampling.LANCZOS)
            out = io.BytesIO()
            picture.save(out, "JPEG", quality=JPEG_QUALITY)
            return Picture(out.getvalue(), "image/jpeg"), True
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError, ValueError):
        raise UpstreamError("The image could not be read.") from None


def _to_rgb(image: Image.Image) -> Image.Image:
    """RGB for JPEG; transparency composited onto white, as a page's paper is."""
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        paper = Image.new("RGB", rgba.size, (255, 255, 255))
        paper.paste(rgba, mask=rgba.getchannel("A"))
        return paper
    return image.convert("RGB")


def stable_key(url: str) -> str:
    """The URL without the host's per-minute signature, so a re-signed link hits the cache."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    kept = urlencode([(k, v) for k, v in query if k not in SIGNATURE_PARAMS])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, kept, ""))


def clamp_width(value: str | int | None) -> int | None:
    """A reader's ``maxWidth``: digits within bounds, anything else means full size."""
    if value is None:
        return None
    text = str(value).strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 6:
        return None
    return max(MIN_WIDTH, min(MAX_WIDTH, int(text)))


class ImagePipeline:
    """Fetching, converting, resizing and caching images for every face of one host."""

    def __init__(self, core: Core):
        self.core = core
        services = core.host.services
        self.deadline = core.settings.server.upstream_timeout
        self.upstream: UpstreamClient = services.http_client(
            timeout=self.deadline,
            retries=0,
            headers={"Accept": "image/jpeg,image/png,image/gif,image/webp,image/avif,image/*"},
        )
        self.memory = _MemoryCache(MEMORY_BYTES, MEMORY_SECONDS)
        self.disk = DiskCache(
            Path(core.settings.host.data_dir) / "image-cache", DISK_BYTES, suffix=".jpg"
        )
        self._fetches = _InFlight()
        self._renders = _InFlight()
        self._lists = _InFlight()
        self._page_lists: OrderedDict[Hashable, tuple[float, list[str]]] = OrderedDict()
        self._gates = _Gates(PER_UPSTREAM, MAX_UPSTREAM_GATES)
        self._local: dict[str, httpx.AsyncClient] = {}
        #: Upstream fetches made, for tests and the bench.
        self.fetched = 0

    # -- page lists ------------------------------------------------------------------

    async def page_urls(self, slug: str, manga: str, chapter: str, caller: Caller) -> list[str]:
        """The chapter's page URLs through the core, remembered briefly for this caller."""
        credentials = hashlib.sha256(
            "\n".join(
                f"{k}:{caller.headers.get(k, '')}" for k in ("authorization", "cookie", "x-api-key")
            ).encode()
        ).hexdigest()
        key = (slug, manga, chapter, credentials, caller.base_url)
        kept = self._page_lists.get(key)
        if kept is not None and kept[0] > time.monotonic():
            return kept[1]

        async def ask() -> list[str]:
            answer = await self.core.pages(slug, manga, chapter, caller)
            # Never longer than a signed page link lives.
            keep = min(PAGE_LIST_SECONDS, self.core.settings.host.link_ttl)
            self._page_lists[key] = (time.monotonic() + keep, answer.value)
            while len(self._page_lists) > PAGE_LIST_ENTRIES:
                self._page_lists.popitem(last=False)
            return answer.value

        return await self._lists.run(key, ask)

    # -- images ------------------------------------------------------------------------

    async def render(
        self, hosted: HostedSource, url: str, base_url: str, *, width: int | None = None
    ) -> Picture:
        """The image at ``url`` (of source ``hosted``) in a PSE format, at most ``width`` wide."""
        stable = stable_key(url)
        disk_key = hashlib.sha256(f"{hosted.slug}\n{stable}\n{width or 0}".encode()).hexdigest()

        async def compute() -> Picture:
            cached = await asyncio.to_thread(self.disk.get, disk_key)
            if cached is not None:
                return Picture(cached, "image/jpeg")
            raw = await self.fetch(hosted, url, base_url)
            picture, converted = await asyncio.to_thread(transform, raw.data, width)
            if converted:
                await asyncio.to_thread(self.disk.put, disk_key, picture.data)
            return picture

        return await self._renders.run(disk_key, compute)

    async def thumbnail(self, hosted: HostedSource, url: str, base_url: str) -> Picture:
        return await self.render(hosted, url, base_url, width=THUMBNAIL_WIDTH)

    async def fetch(self, hosted: HostedSource, url: str, base_url: str) -> Picture:
        """The bytes at ``url`` as they are: from the source's own routes, or from its upstream."""
        local_path = self._local_path(hosted, url, base_url)
        if local_path is not None:
            return await self._fetch_local(hosted, local_path)
        key = f"{hosted.slug}\n{stable_key(url)}"
        cached = self.memory.get(key)
        if cached is not None:
            return cached

        async def download() -> Picture:
            picture = await self._fetch_upstream(hosted, url)
            self.memory.put(key, picture)
            return picture

        return await self._fetches.run(key, download)

    def _local_path(self, hosted: HostedSource, url: str, base_url: str) -> str | None:
        """The path and query of ``url`` when it is one of the source's own routes on this host."""
        parts = urlsplit(url)
        origins = {base_url.rstrip("/"), (self.core.host.services.public_url or "").rstrip("/")}
        origin = f"{parts.scheme}://{parts.netloc}"
        prefix = f"{hosted.source.mount.path}/"
        if not parts.path.startswith(prefix) or (parts.scheme and origin not in origins):
            return None
        # Signed afresh: the caller was authorised already, and a link kept in a cached
        # answer may have outlived its own signature.
        fresh = self.core.host.services.link_query(hosted.slug, parts.path)
        kept = [
            (k, v)
            for k, v in parse_qsl(parts.query, keep_blank_values=True)
            if k not in SIGNATURE_PARAMS
        ]
        query = fresh or urlencode(kept)
        return f"{parts.path}?{query}" if query else parts.path

    async def _fetch_local(self, hosted: HostedSource, path: str) -> Picture:
        client = self._local.get(hosted.slug)
        if client is None:
            transport = httpx.ASGITransport(app=hosted.source.mount)
            client = httpx.AsyncClient(transport=transport, base_url="http://toshokan.internal")
            self._local[hosted.slug] = client
        try:
            async with asyncio.timeout(self.deadline):
                response = await client.get(path)
        except TimeoutError:
            raise UpstreamTimeout("The library did not read the image in time.") from None
        if response.status_code == 404:
            raise NotFound("The image is not in the library.")
        if not response.is_success:
            raise UpstreamError(
                f"The library could not serve the image (HTTP {response.status_code})."
            )
        if len(response.content) > MAX_SOURCE_BYTES:
            raise UpstreamError(_too_big())
        kind = response.headers.get("content-type", "application/octet-stream")
        return Picture(response.content, kind)

    async def _fetch_upstream(self, hosted: HostedSource, url: str) -> Picture:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise NotFound("The image URL is not one the host can fetch.")
        config = await self.core.configuration(hosted)
        headers = {"Referer": config.referer} if config.referer else {}
        try:
            async with asyncio.timeout(self.deadline), self._gates.hold(parts.netloc):
                self.fetched += 1
                async with self.upstream.stream("GET", url, headers=headers) as response:
                    _check_status(response)
                    declared = response.headers.get("content-length", "")
                    if declared.isdigit() and int(declared) > MAX_SOURCE_BYTES:
                        raise UpstreamError(_too_big())
                    body = bytearray()
                    async for chunk in response.aiter_bytes():
                        body += chunk
                        if len(body) > MAX_SOURCE_BYTES:
                            raise UpstreamError(_too_big())
                    kind = response.headers.get("content-type", "application/octet-stream")
        except (TimeoutError, httpx.TimeoutException):
            raise UpstreamTimeout(
                f"The image server did not answer within {self.deadline:g} s."
            ) from None
        except httpx.TransportError as error:
            raise UpstreamError(
                f"The image server could not be reached: {type(error).__name__}."
            ) from None
        return Picture(bytes(body), kind)

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
        services = self.core.host.services
        expires = expiry(self.core.settings.host.link_ttl)
        shown_width = THUMBNAIL_WIDTH if thumbnail else width
        query = {"u": url, **({"w": str(shown_width)} if shown_width else {})}
        signature = sign(services.secret, _signed_message(slug, query), expires)
        query.update(exp=str(expires), sig=signature)
        return f"{base_url.rstrip('/')}/_/image/{slug}?{urlencode(query)}"

    def verify(self, slug: str, query: dict[str, str]) -> int:
        """The expiry of a genuine, unexpired link's query; ``INVALID_CREDENTIALS`` otherwise."""
        shown = {k: v for k, v in query.items() if k in ("u", "w")}
        return verify(
            self.core.host.services.secret,
            _signed_message(slug, shown),
            query.get("exp", ""),
            query.get("sig", ""),
        )


def _signed_message(slug: str, query: dict[str, str]) -> str:
    return f"/_/image/{slug}\n{query.get('u', '')}\n{query.get('w', '')}"


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


_pipelines: "weakref.WeakKeyDictionary[Core, ImagePipeline]" = weakref.WeakKeyDictionary()


def images_of(core: Core) -> ImagePipeline:
    """The host's one pipeline, made on first use (after the sources started)."""
    pipeline = _pipelines.get(core)
    if pipeline is None:
        pipeline = _pipelines[core] = ImagePipeline(core)
    return pipeline


# -- the signed image route -------------------------------------------------------------


async def signed_image(request: Request) -> Response:
    """``GET /_/image/<slug>?u=<url>[&w=<width>]&exp=&sig=``: any image of any source, no headers."""
    core: Core = request.app.state.core
    slug = request.path_params["source"]
    hosted = core.source(slug)
    query = dict(request.query_params)
    url = query.get("u", "")
    if not url or len(url) > MAX_URL_LENGTH:
        raise InvalidRequest("The image link has no usable URL.")
    pipeline = images_of(core)
    caller = caller_of(request)
    until = await core.check_link(slug, caller.client, lambda: pipeline.verify(slug, query))
    picture = await pipeline.render(hosted, url, caller.base_url, width=clamp_width(query.get("w")))
    max_age = max(0, min(until - int(time.time()), 86400))
    return image_response(picture, f"private, max-age={max_age}")


def image_response(picture: Picture, cache_control: str) -> Response:
    return Response(
        picture.data,
        media_type=picture.media_type,
        headers={"Cache-Control": cache_control, "X-Content-Type-Options": "nosniff"},
    )


def image_mount() -> Mount:
    """``/_/image``: the signed, header-free image links of :meth:`ImagePipeline.signed_url`."""
    return Mount("/_/image", routes=[Route("/{source}", signed_image, methods=["GET"])])


__all__ = [
    "DiskCache",
    "ImagePipeline",
    "Picture",
    "clamp_width",
    "image_mount",
    "image_response",
    "images_of",
    "stable_key",
    "transform",
]
