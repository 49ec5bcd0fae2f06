"""KOReader's sync plugin against ``/_/kosync``, request for request (see ``koreader.py``)."""

import asyncio
import json
from pathlib import Path
from typing import Literal
from xml.etree import ElementTree

import pytest
from argon2 import PasswordHasher

from tests.helpers.hosts import add_reader, serve_library
from toshokan.core.progress import ChapterRef, Position
from toshokan.edge.paths import BudgetKind, PathBudgets
from toshokan.faces import FACES
from toshokan.testing import ServedHost

from .koreader import ACCEPT, KOReader, book_digest, koreader_partial_md5, userkey

pytestmark = pytest.mark.anyio

UNKNOWN_BOOK = "0b229176d4e8db7f6d2b5a4952368d7a"
ATOM = "{http://www.w3.org/2005/Atom}"


def first_chapter_file(library: Path) -> Path:
    return sorted(library.rglob("*.cbz"))[0]


async def test_an_open_host_takes_any_login_and_refuses_registration(host: ServedHost) -> None:
    device = KOReader(host.client, "anyone", "whatever")
    registered = await device.register()
    assert registered.status_code == 402
    assert registered.json() == {"code": 2005, "message": "User registration is disabled."}
    login = await device.authorize()
    assert (login.status_code, login.json()) == (200, {"authorized": "OK"})
    assert (await device.update_progress(UNKNOWN_BOOK, 3, 10)).status_code == 200
    # Another name on an open host is the same implicit reader.
    other = await KOReader(host.client, "someone", "else").get_progress(UNKNOWN_BOOK)
    assert other.json()["progress"] == "3"


async def test_registration_when_the_operator_opens_it(library: Path, tmp_path: Path) -> None:
    async with serve_library(library, tmp_path / "data", readers={"registration": True}) as host:
        device = KOReader(host.client, "mika", "hunter22")
        created = await device.register()
        assert (created.status_code, created.json()) == (201, {"username": "mika"})
        again = await device.register()
        assert again.status_code == 402
        assert again.json() == {"code": 2002, "message": "Username is already registered."}
        assert (await device.authorize()).status_code == 200
        wrong = await KOReader(host.client, "mika", "hunter3").authorize()
        assert (wrong.status_code, wrong.json()) == (401, {"code": 2001, "message": "Unauthorized"})
        # Now that the host has a reader, strangers are refused.
        stranger = await KOReader(host.client, "anyone", "whatever").authorize()
        assert stranger.status_code == 401


async def test_login_put_and_get_as_the_official_server(host: ServedHost) -> None:
    await add_reader(host, "mika", "hunter22")
    device = KOReader(host.client, "mika", "hunter22")
    assert (await device.authorize()).json() == {"authorized": "OK"}
    empty = await device.get_progress(UNKNOWN_BOOK)
    assert (empty.status_code, empty.json()) == (200, {})
    put = await device.update_progress(UNKNOWN_BOOK, 56, 175)
    assert put.status_code == 200
    assert put.headers["content-type"] == "application/json"
    assert set(put.json()) == {"document", "timestamp"}
    assert put.json()["document"] == UNKNOWN_BOOK
    got = (await device.get_progress(UNKNOWN_BOOK)).json()
    assert got.pop("timestamp") == put.json()["timestamp"]
    assert got == {
        "document": UNKNOWN_BOOK,
        "progress": "56",
        "percentage": 0.32,
        "device": "Kobo_frost",
        "device_id": "6a6b7a0e-7a2b-4b0e-9a35-8f9e0c2d1f3a",
    }
    # An EPUB's XPointer is kept as it came, for any book.
    xpointer = "/body/DocFragment[20]/body/p[22]/img.0"
    put = await device.update_progress(UNKNOWN_BOOK, 1, 1, progress=xpointer, percentage=0.5)
    assert (await device.get_progress(UNKNOWN_BOOK)).json()["progress"] == xpointer
    for wrong in ("hunter3", ""):
        refused = await KOReader(host.client, "mika", wrong).get_progress(UNKNOWN_BOOK)
        assert (refused.status_code, refused.json()) == (
            401,
            {"code": 2001, "message": "Unauthorized"},
        )


async def test_a_chapter_read_in_koreader_is_the_chapter_every_face_sees(
    host: ServedHost, library: Path
) -> None:
    await add_reader(host, "mika", "hunter22")
    book = first_chapter_file(library)
    digest = book_digest(book)
    found = await host.source("local").chapter_of_file(digest)
    assert found is not None and found.pages == 5
    ref = ChapterRef("local", found.manga_slug, found.chapter_slug)
    device = KOReader(host.client, "mika", "hunter22")
    assert (await device.update_progress(digest, 3, 5)).status_code == 200
    position = await host.core.progress.aposition("mika", ref)
    assert position is not None
    assert (position.page, position.pages, position.finished) == (2, 5, False)  # from 0
    assert position.device == "Kobo_frost"
    # Another face moves the same chapter later: KOReader is shown that page.
    later = Position(4, 5, True, position.updated + 60, "browser-1", "Firefox")
    assert await host.core.progress.arecord("mika", ref, later)
    got = (await device.get_progress(digest)).json()
    assert (got["progress"], got["percentage"], got["device"]) == ("5", 1.0, "Firefox")
    # And an older write from anywhere never moves it back.
    earlier = Position(0, 5, False, position.updated - 60, "browser-2", "Safari")
    assert not await host.core.progress.arecord("mika", ref, earlier)
    assert (await device.get_progress(digest)).json()["progress"] == "5"


async def test_a_book_downloaded_through_opds_is_its_chapter(
    host: ServedHost, library: Path
) -> None:
    await add_reader(host, "mika", "hunter22")
    found = await host.source("local").chapter_of_file(book_digest(first_chapter_file(library)))
    assert found is not None
    # The reader, signed in, takes the chapter's acquisition link from its OPDS entry...
    feed = await host.client.get(
        f"/_/opds/local/series/{found.manga_slug}/{found.chapter_slug}", auth=("mika", "hunter22")
    )
    entry = ElementTree.fromstring(feed.content)
    href = next(
        link.attrib["href"]
        for link in entry.iter(f"{ATOM}link")
        if link.attrib.get("rel") == "http://opds-spec.org/acquisition"
    )
    downloaded = await host.client.get(href)
    assert downloaded.status_code == 200
    # ...and KOReader opens the downloaded file, naming it by its bytes.
    digest = koreader_partial_md5(downloaded.content)
    device = KOReader(host.client, "mika", "hunter22")
    assert (await device.update_progress(digest, 4, 5)).status_code == 200
    ref = ChapterRef("local", found.manga_slug, found.chapter_slug)
    position = await host.core.progress.aposition("mika", ref)
    assert position is not None and (position.page, position.pages) == (3, 5)  # page 4, from 0


async def test_one_reader_never_sees_another(host: ServedHost, library: Path) -> None:
    await add_reader(host, "mika", "hunter22")
    await add_reader(host, "ren", "swordfish")
    digest = book_digest(first_chapter_file(library))
    mika, ren = KOReader(host.client, "mika", "hunter22"), KOReader(host.client, "ren", "swordfish")
    await mika.update_progress(digest, 4, 5)
    await mika.update_progress(UNKNOWN_BOOK, 9, 10)
    assert (await ren.get_progress(digest)).json() == {}
    assert (await ren.get_progress(UNKNOWN_BOOK)).json() == {}
    # Ren's own name with Mika's key is refused.
    crossed = KOReader(host.client, "ren", "hunter22")
    assert (await crossed.get_progress(digest)).status_code == 401


async def test_a_removed_reader_takes_their_progress(host: ServedHost, library: Path) -> None:
    await add_reader(host, "ren", "swordfish")  # the host keeps a reader: it stays closed
    await add_reader(host, "mika", "hunter22")
    digest = book_digest(first_chapter_file(library))
    device = KOReader(host.client, "mika", "hunter22")
    await device.update_progress(digest, 4, 5)
    await device.update_progress(UNKNOWN_BOOK, 9, 10)
    readers = host.core.readers.readers
    assert await asyncio.to_thread(readers.remove, "mika")
    assert (await device.authorize()).status_code == 401  # at once, though it was remembered
    await add_reader(host, "mika", "hunter22")  # the name again is a new reader, with nothing
    assert (await device.get_progress(digest)).json() == {}
    assert (await device.get_progress(UNKNOWN_BOOK)).json() == {}


async def test_progress_survives_a_restart(library: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    digest = book_digest(first_chapter_file(library))
    async with serve_library(library, data) as host:
        await add_reader(host, "mika", "hunter22")
        device = KOReader(host.client, "mika", "hunter22")
        assert (await device.update_progress(digest, 2, 5)).status_code == 200
        assert (await device.update_progress(UNKNOWN_BOOK, 7, 10)).status_code == 200
    async with serve_library(library, data) as host:
        device = KOReader(host.client, "mika", "hunter22")
        assert (await device.get_progress(digest)).json()["progress"] == "2"
        assert (await device.get_progress(UNKNOWN_BOOK)).json()["progress"] == "7"


async def test_wrong_keys_spend_the_attempt_budget(library: Path, tmp_path: Path) -> None:
    limits = {"rate_limit": 0, "auth_attempts": 3}
    async with serve_library(library, tmp_path / "data", limits=limits) as host:
        await add_reader(host, "mika", "hunter22")
        for _ in range(3):
            assert (await KOReader(host.client, "mika", "guess").authorize()).status_code == 401
        limited = await KOReader(host.client, "mika", "hunter22").authorize()
        assert limited.status_code == 429
        assert limited.json()["code"] == 2001
        assert int(limited.headers["retry-after"]) >= 1


class CountingHasher(PasswordHasher):
    """argon2 as the host uses it, counting verifications."""

    def __init__(self) -> None:
        super().__init__()
        self.checks = 0

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
        self.checks += 1
        return super().verify(hash, password)


async def test_a_reader_pays_argon2_once(host: ServedHost) -> None:
    await add_reader(host, "mika", "hunter22")
    hasher = host.core.readers.readers.hasher = CountingHasher()
    device = KOReader(host.client, "mika", "hunter22")
    for page in range(1, 6):
        assert (await device.update_progress(UNKNOWN_BOOK, page, 5)).status_code == 200
    assert hasher.checks == 1


def test_kosync_spends_the_request_budget() -> None:
    """The host's rate limit covers the face: requests, not the larger image budget."""
    for path in ("/_/kosync/syncs/progress", "/_/kosync/users/auth", "/_/kosync/healthcheck"):
        assert PathBudgets(FACES).of(path) is BudgetKind.REQUESTS


async def test_rate_limit_applies(library: Path, tmp_path: Path) -> None:
    async with serve_library(library, tmp_path / "data", limits={"rate_limit": 3}) as host:
        device = KOReader(host.client, "anyone", "whatever")
        answers = [(await device.update_progress(UNKNOWN_BOOK, 1, 2)).status_code for _ in range(4)]
        assert answers == [200, 200, 200, 429]


async def test_healthcheck(host: ServedHost) -> None:
    answer = await host.client.get("/_/kosync/healthcheck", headers={"accept": ACCEPT})
    assert (answer.status_code, answer.json()) == (200, {"state": "OK"})


BAD_ACCEPT = [
    ({}, 412, {"code": 100, "message": "Accept header not set."}),
    (
        {"accept": "application/json"},
        412,
        {"code": 101, "message": "Invalid Accept header format."},
    ),
    (
        {"accept": "application/vnd.koreader.v2+json"},
        412,
        {"code": 102, "message": "Unsupported version specified in the Accept header."},
    ),
]


@pytest.mark.parametrize(("headers", "status", "body"), BAD_ACCEPT)
async def test_gin_refuses_other_accept_headers(
    host: ServedHost, headers: dict[str, str], status: int, body: dict[str, object]
) -> None:
    request = host.client.build_request("GET", "/_/kosync/healthcheck", headers=headers)
    if not headers:
        del request.headers["accept"]  # httpx's own */* would be sent otherwise
    answer = await host.client.send(request)
    assert (answer.status_code, answer.json()) == (status, body)


def put_body(**fields: object) -> dict[str, object]:
    body: dict[str, object] = {
        "document": UNKNOWN_BOOK,
        "progress": "3",
        "percentage": 0.3,
        "device": "Kobo",
        "device_id": "x",
    }
    body.update(fields)
    return {k: v for k, v in body.items() if v is not None}


INVALID = {"code": 2003, "message": "Invalid request"}
NO_DOCUMENT = {"code": 2004, "message": "Field 'document' not provided."}
BAD_BODIES: list[tuple[bytes, int, dict[str, object] | int]] = [
    (b"{not json", 400, {"code": 103, "message": "Could not parse JSON in body."}),
    (b"[1, 2]", 400, {"code": 104, "message": "Body should be a JSON hash."}),
    (b'{"percentage": NaN}', 400, {"code": 103, "message": "Could not parse JSON in body."}),
    (json.dumps(put_body(document=None)).encode(), 403, NO_DOCUMENT),
    (json.dumps(put_body(document="a:b")).encode(), 403, NO_DOCUMENT),
    (json.dumps(put_body(document="d" * 129)).encode(), 403, NO_DOCUMENT),
    (json.dumps(put_body(document=17)).encode(), 403, NO_DOCUMENT),
    (json.dumps(put_body(percentage=None)).encode(), 403, INVALID),
    (json.dumps(put_body(progress=None)).encode(), 403, INVALID),
    (json.dumps(put_body(device=None)).encode(), 403, INVALID),
    (json.dumps(put_body(percentage="lots")).encode(), 403, INVALID),
    (json.dumps(put_body(percentage=1.5)).encode(), 403, 2003),
    (json.dumps(put_body(percentage=-0.1)).encode(), 403, 2003),
    (json.dumps(put_body(progress="p" * 2049)).encode(), 403, 2003),
    (json.dumps(put_body(progress={"page": 3})).encode(), 403, 2003),
    (json.dumps(put_body(device="d" * 257)).encode(), 403, 2003),
    (json.dumps(put_body(device_id=["x"])).encode(), 403, 2003),
    (json.dumps(put_body(device="x" * 20_000)).encode(), 413, 2003),
]


@pytest.mark.parametrize(("raw", "status", "expected"), BAD_BODIES)
async def test_bad_bodies_are_refused_in_koreader_shape(
    host: ServedHost, raw: bytes, status: int, expected: dict[str, object] | int
) -> None:
    headers = {
        "accept": ACCEPT,
        "content-type": "application/json",
        "x-auth-user": "anyone",
        "x-auth-key": userkey("whatever"),
    }
    answer = await host.client.put("/_/kosync/syncs/progress", content=raw, headers=headers)
    assert answer.status_code == status
    body = answer.json()
    assert set(body) == {"code", "message"}
    if isinstance(expected, int):
        assert body["code"] == expected
    else:
        assert body == expected


async def test_a_document_id_out_of_bounds_is_refused(host: ServedHost) -> None:
    device = KOReader(host.client, "anyone", "whatever")
    for document in ("a:b", "d" * 129):
        answer = await device.get_progress(document)
        assert (answer.status_code, answer.json()) == (403, NO_DOCUMENT)


async def test_registration_bodies(library: Path, tmp_path: Path) -> None:
    async with serve_library(library, tmp_path / "data", readers={"registration": True}) as host:
        headers = {"accept": ACCEPT, "content-type": "application/json"}
        for body in ({"username": "a:b", "password": "k"}, {"username": "mika"}, {}):
            answer = await host.client.post(
                "/_/kosync/users/create", content=json.dumps(body), headers=headers
            )
            assert answer.status_code == 403
            assert answer.json()["code"] == 2003
