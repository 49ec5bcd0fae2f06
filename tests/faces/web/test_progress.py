"""The web reader's session and progress endpoints under ``/_/web``, as its page calls them."""

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.helpers.hosts import add_reader
from toshokan.core.readers import SESSION_COOKIE
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library
from toshokan.testing import ServedHost, serve_host

pytestmark = pytest.mark.anyio

CHAPTER = "/_/web/progress/local/a-manga/ch-1"


@pytest.fixture
async def host(tmp_path: Path, database_url: str | None) -> AsyncIterator[ServedHost]:
    """Readers and progress in SQLite, then in PostgreSQL."""
    root = tmp_path / "library"
    write_demo_library(root, series=1, chapters=1, pages=2)
    spec = (LocalLibrary, LocalSettings(root=root, watch=False))
    async with serve_host(
        {"local": spec},
        data_dir=tmp_path / "data",
        limits={"rate_limit": 0, "auth_attempts": 3},
        cluster={"database": database_url},
    ) as served:
        yield served


def write(page: int, pages: int = 10, updated: float | None = None) -> dict[str, object]:
    return {"page": page, "pages": pages, "updated": time.time() if updated is None else updated}


async def test_an_open_host_keeps_the_implicit_readers_place_without_a_session(
    host: ServedHost,
) -> None:
    assert (await host.client.get("/_/web/session")).json() == {
        "readers": False,
        "reader": "",
        "opens": [],
    }
    put = await host.client.put(CHAPTER, json=write(3))
    assert put.status_code == 200
    assert put.json()["position"]["page"] == 3
    host.client.cookies.clear()
    got = await host.client.get("/_/web/progress/local/a-manga")
    assert got.json()["chapters"]["ch-1"]["page"] == 3
    recent = (await host.client.get("/_/web/progress/recent")).json()["chapters"]
    assert [(c["manga"], c["chapter"], c["page"]) for c in recent] == [("a-manga", "ch-1", 3)]


async def test_a_session_cookie_names_the_reader_and_keeps_their_place_apart(
    host: ServedHost,
) -> None:
    await add_reader(host, "mika", "hunter22")
    await add_reader(host, "ren", "swordfish")
    assert (await host.client.get("/_/web/session")).json() == {
        "readers": True,
        "reader": None,
        "opens": [],
    }
    refused = await host.client.put(CHAPTER, json=write(3))
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "INVALID_CREDENTIALS"

    signed = await host.client.post("/_/web/session", json={"name": "mika", "secret": "hunter22"})
    assert signed.json() == {"readers": True, "reader": "mika", "opens": []}
    cookie = signed.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/_/" in cookie
    assert "Secure" not in cookie  # over http; a host behind https sets it
    assert "hunter22" not in cookie
    assert (await host.client.put(CHAPTER, json=write(3))).json()["stored"] is True
    assert (await host.client.get("/_/web/session")).json()["reader"] == "mika"

    # Another browser, another reader: none of mika's place.
    host.client.cookies.clear()
    await host.client.post("/_/web/session", json={"name": "ren", "secret": "swordfish"})
    assert (await host.client.get("/_/web/progress/local/a-manga")).json() == {"chapters": {}}
    assert (await host.client.get("/_/web/progress/recent")).json() == {"chapters": []}

    # Signing out ends the session in this browser.
    out = await host.client.delete("/_/web/session")
    assert out.json()["reader"] is None
    assert (await host.client.get("/_/web/progress/recent")).status_code == 401


async def test_an_older_write_never_overwrites_a_newer_one(host: ServedHost) -> None:
    now = time.time()
    await host.client.put(CHAPTER, json=write(5, updated=now))
    late = await host.client.put(CHAPTER, json=write(2, updated=now - 60))
    assert late.json() == {
        "stored": False,
        "position": {"page": 5, "pages": 10, "finished": False, "updated": now},
    }
    # A clock far ahead does not hold the position against every later write.
    await host.client.put(CHAPTER, json=write(7, updated=now + 10**8))
    assert (await host.client.put(CHAPTER, json=write(8))).json()["stored"] is True


async def test_a_forged_expired_or_removed_readers_session_is_no_session(
    host: ServedHost,
) -> None:
    await add_reader(host, "mika", "hunter22")
    await add_reader(host, "ren", "swordfish")
    signed = await host.client.post("/_/web/session", json={"name": "mika", "secret": "hunter22"})
    token = signed.cookies[SESSION_COOKIE]
    _, expires, signature = token.split(".")
    forged = f"cmVu.{expires}.{signature}"  # "ren" with mika's signature
    host.client.cookies.set(SESSION_COOKIE, forged, path="/_/")
    assert (await host.client.get("/_/web/session")).json()["reader"] is None
    host.client.cookies.set(SESSION_COOKIE, token, path="/_/")
    assert (await host.client.get("/_/web/session")).json()["reader"] == "mika"
    await asyncio.to_thread(host.core.readers.readers.remove, "mika")
    assert (await host.client.get("/_/web/session")).json()["reader"] is None
    assert (await host.client.put(CHAPTER, json=write(1))).status_code == 401


async def test_wrong_passwords_count_against_the_attempt_budget(host: ServedHost) -> None:
    await add_reader(host, "mika", "hunter22")
    statuses = [
        (
            await host.client.post("/_/web/session", json={"name": "mika", "secret": "no"})
        ).status_code
        for _ in range(4)
    ]
    assert statuses == [401, 401, 401, 429]
    limited = await host.client.post("/_/web/session", json={"name": "mika", "secret": "hunter22"})
    assert limited.status_code == 429
    assert limited.json()["error"]["code"] == "RATE_LIMITED"
    assert SESSION_COOKIE not in limited.cookies


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/_/web/session", [], 400),
        ("/_/web/session", {"name": "mika"}, 400),
        ("/_/web/session", {"name": "mika", "secret": "x" * 5000}, 400),
        (CHAPTER, {"page": 3}, 400),
        (CHAPTER, {"page": 10, "pages": 10, "updated": 1}, 400),
        (CHAPTER, {"page": -1, "pages": 10, "updated": 1}, 400),
        (CHAPTER, {"page": "3", "pages": 10, "updated": 1}, 400),
        (CHAPTER, {"page": 1, "pages": 10, "updated": 1, "extra": True}, 400),
        (CHAPTER, "not an object", 400),
        ("/_/web/progress/nosuch/a-manga/ch-1", {"page": 1, "pages": 2, "updated": 1}, 404),
        ("/_/web/progress/local/a-manga/" + "c" * 300, {"page": 1, "pages": 2, "updated": 1}, 400),
    ],
)
async def test_every_bad_body_is_a_4xx_error_object(
    host: ServedHost, path: str, body: object, status: int
) -> None:
    method = host.client.post if path.endswith("session") else host.client.put
    answer = await method(path, json=body)
    assert answer.status_code == status
    assert set(answer.json()["error"]) == {"code", "message"}


async def test_a_body_past_the_bound_and_an_infinite_time_are_refused(host: ServedHost) -> None:
    huge = await host.client.put(CHAPTER, content=b'{"page": 1, "x": "' + b"a" * 70_000 + b'"}')
    assert huge.status_code == 413
    infinite = await host.client.put(
        CHAPTER, content=b'{"page": 1, "pages": 2, "updated": Infinity}'
    )
    assert infinite.status_code == 400
    assert (await host.client.get("/_/web/progress/recent?limit=0")).status_code == 400
