"""The web reader's session opens a library that accepts the host's readers: the page's own
requests to the JSON interface carry the session cookie, and nothing else is needed."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.helpers.hosts import add_reader
from toshokan.sources.local import LocalLibrary, write_demo_library
from toshokan.testing import ServedHost, serve_host

pytestmark = pytest.mark.anyio

SEARCH = {"page": 1, "sort": "title", "direction": "asc"}


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[ServedHost]:
    root = tmp_path / "library"
    write_demo_library(root, series=1, chapters=1, pages=2)
    spec = (LocalLibrary, {"root": root, "watch": False, "auth": "readers"})
    async with serve_host(
        {"shelf": spec}, data_dir=tmp_path / "data", limits={"rate_limit": 0}
    ) as served:
        yield served


async def test_the_signed_in_session_opens_the_source(host: ServedHost) -> None:
    await add_reader(host, "mika", "hunter22")
    client = host.client
    assert (await client.post("/shelf/search", json=SEARCH)).status_code == 401

    signed = await client.post("/_/web/session", json={"name": "mika", "secret": "hunter22"})
    assert signed.json() == {"readers": True, "reader": "mika", "opens": ["shelf"]}
    assert "Path=/;" in signed.headers["set-cookie"]  # sent to the JSON interface too
    found = await client.post("/shelf/search", json=SEARCH)
    assert found.status_code == 200
    manga = found.json()["results"][0]["slug"]
    chapters = await client.get(f"/shelf/{manga}/chapters")
    assert chapters.status_code == 200
    chapter = chapters.json()[0]["slug"]
    pages = await client.get(f"/shelf/{manga}/chapters/{chapter}")
    assert pages.status_code == 200 and len(pages.json()) == 2

    # Signing out locks it again.
    await client.delete("/_/web/session")
    assert (await client.post("/shelf/search", json=SEARCH)).status_code == 401


async def test_a_forged_session_opens_nothing(host: ServedHost) -> None:
    await add_reader(host, "mika", "hunter22")
    host.client.cookies.set("toshokan_session", "bWlrYQ.9999999999.forged", path="/")
    assert (await host.client.post("/shelf/search", json=SEARCH)).status_code == 401
