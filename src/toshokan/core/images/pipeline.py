"""The pipeline: fetching any source's image once, converting it, caching it, signing links to it.

Host URLs (a source's own routes under ``/_/<slug>``) are answered in-process by
the source's mounted routes; upstream URLs are fetched with the host's
User-Agent and the source's Referer, under the host's upstream deadline and
with a bound on the bytes read.
"""

import asyncio
import functools
import hashlib
import time
import weakref
from collections import OrderedDict
from collections.abc import Hashable
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import httpx

from toshokan.core.host import HostedSource
from toshokan.core.images.pictures import (
    SIGNATURE_PARAMS,
    THUMBNAIL_WIDTH,
    Picture,
    stable_key,
    transform,
)
from toshokan.core.images.sharing import HostGates, InFlight, MemoryCache
from toshokan.core.service import Caller, Core
from toshokan.core.signing import credential_key, verify
from toshokan.errors import NotFound, RateLimited, UpstreamError, UpstreamTimeout
from toshokan.sdk.archives import DiskCache
from toshokan.sdk.http import UpstreamClient, retry_after_seconds
from toshokan.sdk.urls import image_message

#: The largest image read from anywhere; a bigger one is an upstream error, never memory.
MAX_SOURCE_BYTES = 32 * 1024 * 1024
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
        self.memory = MemoryCache(MEMORY_BYTES, MEMORY_SECONDS)
        self.disk = DiskCache(
            Path(core.settings.host.data_dir) / "image-cache", DISK_BYTES, suffix=".jpg"
        )
        self._fetches = InFlight()
        self._renders = InFlight()
        self._lists = InFlight()
        self._page_lists: OrderedDict[Hashable, tuple[float, list[str]]] = OrderedDict()
        self._gates = HostGates(PER_UPSTREAM, MAX_UPSTREAM_GATES)
        self._local: dict[str, httpx.AsyncClient] = {}

    # -- page lists ------------------------------------------------------------------

    async def page_urls(self, slug: str, manga: str, chapter: str, caller: Caller) -> list[str]:
        """The chapter's page URLs through the core, remembered briefly for this caller."""
        credentials = credential_key(
            self.core.host.services.secret,
            {
                k: v
                for k in ("authorization", "cookie", "x-api-key")
                if (v := caller.headers.get(k))
            },
        )
        # The source's generation: a changed chapter's list is asked afresh at once.
        generation = self.core.cache.generation(slug)
        key = (slug, generation, manga, chapter, credentials, caller.base_url)
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
        self,
        hosted: HostedSource,
        url: str,
        base_url: str,
        *,
        width: int | None = None,
        as_jpeg: bool = False,
    ) -> Picture:
        """The image at ``url`` (of source ``hosted``) in a PSE format (JPEG when ``as_jpeg``),
        upright, at most ``width`` wide."""
        stable = stable_key(url)
        key = f"{hosted.slug}\n{stable}\n{width or 0}\n{'jpeg' if as_jpeg else ''}"
        disk_key = hashlib.sha256(key.encode()).hexdigest()

        async def compute() -> Picture:
            cached = await asyncio.to_thread(self.disk.get, disk_key)
            if cached is not None:
                return Picture(cached, "image/jpeg")
            raw = await self.fetch(hosted, url, base_url)
            picture, converted = await asyncio.to_thread(
                functools.partial(transform, raw.data, width, as_jpeg=as_jpeg)
            )
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
        kept = [
            (k, v)
            for k, v in parse_qsl(parts.query, keep_blank_values=True)
            if k not in SIGNATURE_PARAMS
        ]
        route = parts.path.removeprefix(hosted.source.mount.path)
        return self.core.host.services.urls("").source_route(hosted.slug, route, kept)

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
            async with (
                asyncio.timeout(self.deadline),
                self._gates.hold(parts.netloc),
                self.upstream.stream("GET", url, headers=headers) as response,
            ):
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
        shown_width = THUMBNAIL_WIDTH if thumbnail else width
        return self.core.host.services.urls(base_url).image(slug, url, shown_width)

    def verify(self, slug: str, query: dict[str, str]) -> int:
        """The expiry of a genuine, unexpired link's query; ``INVALID_CREDENTIALS`` otherwise."""
        return verify(
            self.core.host.services.secret,
            image_message(slug, query.get("u", ""), query.get("w", "")),
            query.get("exp", ""),
            query.get("sig", ""),
        )


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
