"""A source that accepts the host's readers (``auth = "readers"``), through the spec's interface:
it declares a Basic sign-in, a reader's name and password (or API key) open it, and wrong ones
spend the readers' attempt budget."""

import base64
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.helpers.hosts import add_reader
from toshokan.config import SourceSection
from toshokan.sources.local import LocalLibrary, write_demo_library
from toshokan.testing import ServedHost, serve_host

pytestmark = pytest.mark.anyio

ATTEMPTS = 3
SEARCH = {"page": 1, "sort": "title", "direction": "asc"}


def basic(name: str, secret: str) -> dict[str, str]:
    pair = base64.b64encode(f"{name}:{secret}".encode()).decode()
    return {"Authorization": f"Basic {pair}"}


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[ServedHost]:
    """``shelf`` accepts the host's readers; ``open`` is the same library, open to anyone."""
    root = tmp_path / "library"
    write_demo_library(root, series=2, chapters=1, pages=2)
    options = {"root": root, "watch": False}
    async with serve_host(
        {
            "shelf": (LocalLibrary, {**options, "auth": "readers"}),
            "open": (LocalLibrary, {**options, "index_path": tmp_path / "open.sqlite3"}),
        },
        data_dir=tmp_path / "data",
        limits={"rate_limit": 0, "auth_attempts": ATTEMPTS},
    ) as served:
        yield served


def test_the_host_takes_auth_readers_and_the_adapter_never_sees_it() -> None:
    readers = SourceSection.model_validate({"auth": "readers", "root": "/srv/comics"})
    assert readers.accepts_readers
    assert readers.adapter_settings() == {"root": "/srv/comics"}
    own = SourceSection.model_validate({"auth": "basic", "username": "ann"})
    assert not own.accepts_readers
    assert own.adapter_settings() == {"auth": "basic", "username": "ann"}


async def test_the_configuration_declares_a_required_basic_sign_in(host: ServedHost) -> None:
    auth = (await host.client.get("/shelf")).json()["auth"]
    assert auth == {"type": "basic", "required": True, "fields": ["username", "password"]}
    assert (await host.client.get("/open")).json()["auth"]["type"] == "none"


async def test_a_readers_sign_in_answers_basic_headers_that_open_the_source(
    host: ServedHost,
) -> None:
    key = await add_reader(host, "mika", "hunter22")
    client = host.client
    assert (await client.post("/shelf/search", json=SEARCH)).status_code == 401

    signed = await client.post(
        "/shelf/authenticate", json={"username": "mika", "password": "hunter22"}
    )
    assert signed.status_code == 200
    assert signed.json() == {"success": True, "headers": basic("mika", "hunter22")}
    found = await client.post("/shelf/search", json=SEARCH, headers=signed.json()["headers"])
    assert found.status_code == 200
    results = found.json()["results"]
    assert len(results) == 2
    assert "private" in found.headers["cache-control"]  # someone's, though every reader's alike

    # An API key is a password too, as Basic or alone.
    manga = results[0]["slug"]
    assert (await client.get(f"/shelf/{manga}", headers=basic("mika", key))).status_code == 200
    chapters = await client.get(f"/shelf/{manga}/chapters", headers={"X-API-Key": key})
    assert chapters.status_code == 200
    chapter = chapters.json()[0]["slug"]
    pages = await client.get(f"/shelf/{manga}/chapters/{chapter}", headers=basic("mika", key))
    assert pages.status_code == 200
    # The page images are signed links: an image loader sends no credentials.
    image = await client.get(pages.json()[0])
    assert image.status_code == 200 and image.headers["content-type"].startswith("image/")


async def test_wrong_passwords_are_refused_and_spend_the_attempt_budget(
    host: ServedHost,
) -> None:
    await add_reader(host, "mika", "hunter22")
    client = host.client
    for _ in range(ATTEMPTS):
        refused = await client.post(
            "/shelf/authenticate", json={"username": "mika", "password": "guess"}
        )
        assert refused.status_code == 401
        assert refused.json()["success"] is False
        assert refused.json()["error"]["code"] == "INVALID_CREDENTIALS"
    limited = await client.post(
        "/shelf/authenticate", json={"username": "mika", "password": "hunter22"}
    )
    assert limited.status_code == 429
    assert limited.json()["success"] is False
    assert limited.json()["error"]["code"] == "RATE_LIMITED"
    # The same budget as every sign-in of a reader: content requests are stopped too.
    search = await client.post("/shelf/search", json=SEARCH, headers=basic("mika", "hunter22"))
    assert search.status_code == 429 and "retry-after" in search.headers


async def test_missing_fields_are_named(host: ServedHost) -> None:
    answer = await host.client.post("/shelf/authenticate", json={"username": "mika"})
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "MISSING_FIELDS"


async def test_without_readers_no_one_opens_it(host: ServedHost) -> None:
    """A host without readers is open, but has no one to open a readers' source to."""
    refused = await host.client.post(
        "/shelf/authenticate", json={"username": "anyone", "password": "anything"}
    )
    assert refused.status_code == 401 and refused.json()["success"] is False
    search = await host.client.post("/shelf/search", json=SEARCH, headers=basic("a", "b"))
    assert search.status_code == 401
    assert (await host.client.post("/open/search", json=SEARCH)).status_code == 200
