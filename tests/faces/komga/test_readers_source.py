"""A library that accepts the host's readers (``auth = "readers"``) through the Komga face: a
signed-in reader sees and reads it, Mihon's tracker follows its series on the session cookie
alone, and no one else is shown it."""

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.faces.komga.clients.okhttp_session import Response
from toshokan.sources.local import LocalLibrary, write_demo_library
from toshokan.testing import ServedHost, serve_host

from .helpers import ATTEMPTS, SECRET, SERVER, add_reader, mihon

pytestmark = pytest.mark.anyio

SHELF = "Readers' Shelf"
OWN = "Own Account"


def parsed(response: Response) -> Any:
    return json.loads(response.content)


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[ServedHost]:
    """``local`` is open, ``shelf`` accepts the host's readers, ``own`` has its own account."""
    root = tmp_path / "library"
    write_demo_library(root, series=2, chapters=2, pages=2)

    def library(name: str, **options: Any) -> tuple[type[LocalLibrary], dict[str, Any]]:
        index = tmp_path / f"{name.split()[0].lower()}.sqlite3"
        return LocalLibrary, {"root": root, "watch": False, "name": name, "index_path": index}

    async with serve_host(
        {
            "local": library("Local Library"),
            "shelf": (LocalLibrary, {**library(SHELF)[1], "auth": "readers"}),
            "own": (
                LocalLibrary,
                {**library(OWN)[1], "auth": "basic", "username": "ann", "password": "pw"},
            ),
        },
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0, "auth_attempts": ATTEMPTS},
    ) as served:
        yield served


async def test_a_signed_in_reader_sees_it_and_the_tracker_follows_it(host: ServedHost) -> None:
    await add_reader(host, "mika", "hunter22")
    network, source = mihon(host, "mika", "hunter22")
    libraries = parsed(await source.client.request("GET", f"{SERVER}/api/v1/libraries", check=True))
    names = {library["name"]: library["id"] for library in libraries}
    assert set(names) == {"Local Library", SHELF}  # not the one with an account of its own

    listing = f"{SERVER}/api/v1/series?library_id={names[SHELF]}&unpaged=true"
    series = parsed(await source.client.request("GET", listing, check=True))["content"]
    assert len(series) == 2
    books_url = f"{SERVER}/api/v1/series/{series[0]['id']}/books?unpaged=true"
    books = parsed(await source.client.request("GET", books_url, check=True))["content"]
    pages_url = f"{SERVER}/api/v1/books/{books[0]['id']}/pages"
    pages = parsed(await source.client.request("GET", pages_url, check=True))
    assert len(pages) == 2
    image = await source.client.request("GET", f"{pages_url}/1", check=True)
    assert image.status_code == 200

    # Mihon's tracker: no credentials of its own, only the session cookie in the app's jar.
    tracker = network.tracker_client()
    progress_url = f"{SERVER}/api/v2/series/{series[0]['id']}/read-progress/tachiyomi"
    progress = await tracker.request("GET", progress_url, check=True)
    assert progress.sent("authorization") is None
    assert parsed(progress)["booksCount"] == 2
    marked = await tracker.request(
        "PUT",
        progress_url,
        content=b'{"lastBookNumberSortRead":1}',
        headers={"Content-Type": "application/json"},
        check=True,
    )
    assert marked.status_code == 204
    assert parsed(await tracker.request("GET", progress_url, check=True))["booksReadCount"] == 1


async def test_an_api_key_opens_it(host: ServedHost) -> None:
    key = await add_reader(host, "mika", "hunter22")
    answer = await host.client.get("/_/komga/api/v1/libraries", headers={"X-API-Key": key})
    assert SHELF in {library["name"] for library in answer.json()}


async def test_no_one_else_is_shown_it(host: ServedHost) -> None:
    # A host without readers is open, but has no reader to open the shelf to.
    anonymous = await host.client.get("/_/komga/api/v1/libraries")
    assert {library["name"] for library in anonymous.json()} == {"Local Library"}
    # With readers, an anonymous app is asked to sign in, and a wrong password is no reader.
    await add_reader(host, "mika", "hunter22")
    assert (await host.client.get("/_/komga/api/v1/libraries")).status_code == 401
    wrong = await host.client.get("/_/komga/api/v1/libraries", auth=("mika", "guess"))
    assert wrong.status_code == 401
