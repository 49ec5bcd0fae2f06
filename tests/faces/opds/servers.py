"""What the OPDS face's tests serve: hosts with the tests' secret, MangaDex's image servers in
front of the fake API, and the sign-in budget."""

import io
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import httpx
from PIL import Image

from tests.sources.mangadex.fake import API, AT_HOME, UPLOADS, FakeMangaDex
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, SourceSpec, serve_host

SECRET = "test-secret-0123456789abcdef0123"


def webp(
    width: int = 900, height: int = 1300, colour: tuple[int, int, int] = (200, 40, 40)
) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, "WEBP", quality=60)
    return buffer.getvalue()


class ImageServers(httpx.AsyncBaseTransport):
    """MangaDex's at-home and uploads servers (WebP images), in front of the fake API."""

    def __init__(self, api: FakeMangaDex):
        self.api = api.transport()
        self.hosts = {httpx.URL(AT_HOME).host, httpx.URL(UPLOADS).host}
        self.requests: list[httpx.Request] = []
        self.body = webp()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host not in self.hosts:
            return await self.api.handle_async_request(request)
        self.requests.append(request)
        return httpx.Response(200, content=self.body, headers={"Content-Type": "image/webp"})


#: Failed sign-ins a client may make a minute on ``readers_host``.
ATTEMPTS = 4

LOCKED = {"auth": "basic", "username": "reader", "password": "open sesame"}


def serving(
    sources: Mapping[str, SourceSpec],
    tmp_path: Path,
    upstream: Any = None,
    database_url: str | None = None,
    **limits: int,
) -> AbstractAsyncContextManager[ServedHost]:
    """``sources`` on a host with the tests' secret and no rate limit; readers and progress
    in ``database_url`` (PostgreSQL) when given, else SQLite in the data directory."""
    return serve_host(
        sources,
        upstream=upstream,
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0, **limits},
        cluster={"database": database_url},
    )


def local(root: Path, **options: Any) -> SourceSpec:
    return (LocalLibrary, LocalSettings(root=root, watch=False, **options))


def long_lists(
    tmp_path: Path, series: int, chapters: int
) -> AbstractAsyncContextManager[ServedHost]:
    """A library of ``series`` one-chapter series and MangaDex with one title of ``chapters``
    chapters: lists longer than a page."""
    library = tmp_path / "library"
    write_demo_library(library, series=series, chapters=1, pages=1)
    fake = FakeMangaDex()
    fake.add_many_chapters(fake.add_manga("long", "Long Voyage"), chapters, fake.add_group("Crew"))
    sources: dict[str, SourceSpec] = {
        "local": local(library),
        "mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS)),
    }
    return serving(sources, tmp_path, upstream=ImageServers(fake))
