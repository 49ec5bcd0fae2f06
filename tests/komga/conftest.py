"""Hosts for the Komga face: the sample library, a fake MangaDex with its image servers, a fake
OPDS upstream; and Mihon's network over each (the app's one cookie jar).

The image servers in front of the fake MangaDex are copied, at their smallest, from
``tests/opds_face/conftest.py`` (fixtures are not imported across folders).
"""

import asyncio
import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import cast

import httpx
import pytest
from PIL import Image

from tests.komga.clients.mihon_extension import MihonKomgaSource
from tests.komga.clients.okhttp_session import AsyncHttpClient, MihonNetwork
from tests.mangadex.fake import API, AT_HOME, UPLOADS, FakeMangaDex, tag_id
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, serve_host

SECRET = "test-secret-0123456789abcdef0123"
#: The address a person types into the extension: the host's, then the face's prefix.
HOST = "http://testserver"
SERVER = f"{HOST}/_/komga"
#: Failed sign-ins a client may make a minute on the hosts here.
ATTEMPTS = 6


class ImageServers(httpx.AsyncBaseTransport):
    """MangaDex's at-home and uploads servers (WebP pages), in front of the fake API."""

    def __init__(self, api: FakeMangaDex):
        self.api = api.transport()
        self.hosts = {httpx.URL(AT_HOME).host, httpx.URL(UPLOADS).host}
        self.requests: list[httpx.Request] = []
        buffer = io.BytesIO()
        Image.new("RGB", (90, 130), (200, 40, 40)).save(buffer, "WEBP")
        self.body = buffer.getvalue()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host not in self.hosts:
            return await self.api.handle_async_request(request)
        self.requests.append(request)
        return httpx.Response(200, content=self.body, headers={"Content-Type": "image/webp"})


@pytest.fixture
async def local_host(tmp_path: Path) -> AsyncIterator[ServedHost]:
    """Three series of two chapters of three pages, on a host with no readers."""
    root = tmp_path / "library"
    write_demo_library(root, series=3, chapters=2, pages=3)
    async with serve_host(
        {"local": (LocalLibrary, LocalSettings(root=root, watch=False))},
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0, "auth_attempts": ATTEMPTS},
    ) as served:
        yield served


async def add_reader(host: ServedHost, name: str, password: str) -> str:
    """Create a reader; their first API key."""
    return await asyncio.to_thread(host.core.readers.readers.add, name, password)


@pytest.fixture
def mangadex_fake() -> FakeMangaDex:
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
async def mangadex_host(mangadex_fake: FakeMangaDex, tmp_path: Path) -> AsyncIterator[ServedHost]:
    servers = ImageServers(mangadex_fake)
    async with serve_host(
        {"mangadex": (MangaDex, Settings(api_url=API, uploads_url=UPLOADS))},
        upstream=servers,
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0},
    ) as served:
        served.app.state.image_servers = servers
        yield served


def mihon(
    host: ServedHost, username: str = "", password: str = ""
) -> tuple[MihonNetwork, MihonKomgaSource]:
    """Mihon with the Komga extension set up for this host: the address, a name and password."""
    # httpx's client is what the protocol describes; its richer signatures are not the protocol's.
    network = MihonNetwork(cast(AsyncHttpClient, host.client))
    return network, MihonKomgaSource(network.extension_client(username, password), SERVER)
