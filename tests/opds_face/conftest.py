"""Fixtures: hosts serving the local library and a fake MangaDex, with their images."""

import asyncio
import io
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from PIL import Image

from tests.databases import database_url, module_database_url, postgres_server
from tests.mangadex.fake import API, AT_HOME, UPLOADS, FakeMangaDex, tag_id
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, SourceSpec, serve_host

__all__ = ["database_url", "module_database_url", "postgres_server"]

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


@pytest.fixture(scope="session")
def library_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("opds-library") / "library"
    write_demo_library(root, series=3, chapters=2, pages=3)
    return root


@pytest.fixture
def library(tmp_path: Path, library_template: Path) -> Path:
    root = tmp_path / "library"
    shutil.copytree(library_template, root, copy_function=shutil.copy2)
    return root


@pytest.fixture
async def local_host(library: Path, tmp_path: Path) -> AsyncIterator[ServedHost]:
    spec = (LocalLibrary, LocalSettings(root=library, watch=False))
    async with serve_host(
        {"local": spec},
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0},
    ) as served:
        yield served


@pytest.fixture
async def locked_host(library: Path, tmp_path: Path) -> AsyncIterator[ServedHost]:
    settings = LocalSettings(
        root=library, watch=False, auth="basic", username="reader", password="open sesame"
    )
    async with serve_host(
        {"shelf": (LocalLibrary, settings)},
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0},
    ) as served:
        yield served


#: Failed sign-ins a client may make a minute on ``readers_host``.
ATTEMPTS = 4


async def add_reader(host: ServedHost, name: str, password: str) -> str:
    """Create a reader; their first API key."""
    return await asyncio.to_thread(host.core.readers.readers.add, name, password)


@pytest.fixture
async def readers_host(tmp_path: Path, database_url: str | None) -> AsyncIterator[ServedHost]:
    """A library of longer chapters (6 pages), on a host that will have readers; their
    progress in SQLite or in PostgreSQL."""
    root = tmp_path / "long-chapters"
    write_demo_library(root, series=1, chapters=3, pages=6)
    async with serve_host(
        {"local": (LocalLibrary, LocalSettings(root=root, watch=False))},
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0, "auth_attempts": ATTEMPTS},
        cluster={"database": database_url},
    ) as served:
        yield served


@pytest.fixture
def fake() -> FakeMangaDex:
    fake = FakeMangaDex()
    author = fake.add_person("Oda Eiichirou")
    group = fake.add_group("Straw Hat Scans")
    manga = fake.add_manga(
        "pirates",
        "Pirate Voyage",
        authors=[author.id],
        description={"en": "A crew sails for the last island."},
        tags=[tag_id("action")],
    )
    fake.add_many_chapters(manga, 3, group)
    fake.add_manga("sky", "Sky Garden")
    return fake


@pytest.fixture
def image_servers(fake: FakeMangaDex) -> ImageServers:
    return ImageServers(fake)


@pytest.fixture
async def mangadex_host(image_servers: ImageServers, tmp_path: Path) -> AsyncIterator[ServedHost]:
    spec = (MangaDex, Settings(api_url=API, uploads_url=UPLOADS))
    async with serve_host(
        {"mangadex": spec},
        upstream=image_servers,
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0},
    ) as served:
        yield served


@pytest.fixture
async def both_host(
    library: Path, image_servers: ImageServers, tmp_path: Path
) -> AsyncIterator[ServedHost]:
    """The local library, a locked copy of it, and MangaDex, on one host."""
    locked = LocalSettings(
        root=library, watch=False, auth="basic", username="reader", password="open sesame"
    )
    sources: dict[str, SourceSpec] = {
        "local": (LocalLibrary, LocalSettings(root=library, watch=False)),
        "shelf": (LocalLibrary, locked),
        "mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS)),
    }
    async with serve_host(
        sources,
        upstream=image_servers,
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0},
    ) as served:
        yield served
