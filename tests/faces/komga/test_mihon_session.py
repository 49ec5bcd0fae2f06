"""A Mihon session end to end, on a host with readers: the extension signs in after a 401, the
tracker rides the session cookie, and what either marks read is read in the OPDS catalogue,
and the reverse."""

import json
from pathlib import Path
from typing import Any, cast
from xml.etree.ElementTree import Element

import pytest

from tests.faces.komga.clients import komga_dtos as komga
from tests.faces.komga.clients.mihon_extension import SearchFilters, Sort
from tests.faces.komga.clients.mihon_extension_models import SeriesDto
from tests.faces.komga.clients.okhttp_session import (
    AsyncHttpClient,
    HttpError,
    Response,
    aidoku_client,
)
from tests.faces.opds.reader import NS, STREAM, Reader, link
from toshokan.core.progress import ChapterRef, Position
from toshokan.faces.komga.auth import SESSION_COOKIE
from toshokan.faces.komga.ids import book_of
from toshokan.faces.opds.atom import PSE
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library
from toshokan.testing import ServedHost, serve_host

from .helpers import ATTEMPTS, SECRET, SERVER, add_reader, mihon

pytestmark = pytest.mark.anyio

LAST_READ = f"{{{PSE}}}lastRead"
JSON = {"Content-Type": "application/json"}


def parsed(response: Response) -> Any:
    return json.loads(response.content)


def tracker_url(series_url: str) -> str:
    """Where Mihon's tracker asks for a series' progress (``KomgaApi.getTrackSearch``)."""
    return f"{series_url.replace('/api/v1/series/', '/api/v2/series/')}/read-progress/tachiyomi"


async def opds_stream(host: ServedHost, auth: tuple[str, str], ref: ChapterRef) -> Element:
    """The PSE stream link of a chapter in its series' OPDS feed, as a reader sees it."""
    feed = await Reader(host.client, auth=auth).feed(f"/_/opds/{ref.source}/series/{ref.manga}")
    for entry in feed.findall("a:entry", NS):
        found = link(entry, STREAM)
        if found is not None and f"/{ref.chapter}/pages/" in (found.get("href") or ""):
            return found
    raise AssertionError(f"no stream link for {ref.chapter}")


async def test_a_mihon_session_from_sign_in_to_the_tracker(local_host: ServedHost) -> None:
    await add_reader(local_host, "mika", "hunter22")
    network, source = mihon(local_host, "mika", "hunter22")

    # Browse: the first request goes out bare, the 401 draws Basic, the answer sets the session.
    popular = await source.popular(1)
    first, retried = source.client.exchanges[:2]
    assert (first.status_code, first.sent("authorization")) == (401, None)
    assert retried.status_code == 200
    assert (retried.sent("authorization") or "").startswith("Basic ")
    cookie = network.jar.named(SESSION_COOKIE)
    assert len(cookie) == 1 and cookie[0].path == "/_/komga" and not cookie[0].secure

    # Search with a filter, open a series, list its books, read a chapter's pages.
    options = await source.filter_lists()
    wanted = popular.mangas[0]
    found = await source.search(
        1, wanted.title, SearchFilters(libraries=(options.libraries[0].id,), sort=Sort(1, True))
    )
    assert [manga.title for manga in found.mangas] == [wanted.title]
    details = await source.manga_details(wanted.url)
    assert details.title == wanted.title
    chapters = await source.chapter_list(wanted.url)
    first_chapter = min(chapters, key=lambda chapter: chapter.chapter_number)
    pages = await source.page_list(first_chapter.url)
    for page in pages:
        assert (await source.page_image(page.image_url)).status_code == 200

    # The tracker: no credentials of its own, only the app's cookie jar.
    tracker = network.tracker_client()
    series = SeriesDto.decode((await tracker.request("GET", wanted.url, check=True)).content)
    assert series.metadata.title == wanted.title
    progress = parsed(await tracker.request("GET", tracker_url(wanted.url), check=True))
    assert progress["booksReadCount"] == 0 and progress["lastReadContinuousNumberSort"] == 0
    body = b'{"lastBookNumberSortRead":%r}' % first_chapter.chapter_number
    marked = await tracker.request(
        "PUT",
        tracker_url(wanted.url),
        content=body,
        headers=JSON,
        check=True,
    )
    assert marked.status_code == 204 and marked.sent("authorization") is None
    assert SESSION_COOKIE in (marked.sent("cookie") or "")
    progress = parsed(await tracker.request("GET", tracker_url(wanted.url), check=True))
    assert progress["booksReadCount"] == 1
    assert progress["lastReadContinuousNumberSort"] == first_chapter.chapter_number

    # Read in the OPDS catalogue too: its last page is the one PSE shows as read.
    ref = book_of(first_chapter.url.rsplit("/", 1)[1])
    stream = await opds_stream(local_host, ("mika", "hunter22"), ref)
    assert stream.get(LAST_READ) == str(len(pages))


async def test_progress_recorded_elsewhere_shows_in_the_books(local_host: ServedHost) -> None:
    await add_reader(local_host, "mika", "hunter22")
    network, source = mihon(local_host, "mika", "hunter22")
    series = (await source.popular(1)).mangas[0]
    books = parsed(await source.client.request("GET", f"{series.url}/books?unpaged=true"))
    book = books["content"][0]
    assert book["readProgress"] is None
    ref = book_of(book["id"])
    # An OPDS-PSE reader streamed the chapter's second page (1, counted from 0 there).
    page = f"/_/opds/{ref.source}/series/{ref.manga}/{ref.chapter}/pages/1"
    streamed = await local_host.client.get(
        page, auth=("mika", "hunter22"), headers={"User-Agent": "Panels"}
    )
    assert streamed.status_code == 200
    books = parsed(await source.client.request("GET", f"{series.url}/books?unpaged=true"))
    shown = books["content"][0]["readProgress"]
    assert (shown["page"], shown["completed"], shown["deviceName"]) == (2, False, "Panels")
    assert shown["readDate"].endswith("Z")
    progress = parsed(await network.tracker_client().request("GET", tracker_url(series.url)))
    assert progress["booksInProgressCount"] == 1


async def test_marking_a_book_read_and_unread(local_host: ServedHost) -> None:
    await add_reader(local_host, "mika", "hunter22")
    _, source = mihon(local_host, "mika", "hunter22")
    series = (await source.popular(1)).mangas[0]
    book = parsed(await source.client.request("GET", f"{series.url}/books?unpaged=true"))[
        "content"
    ][0]
    url = f"{SERVER}/api/v1/books/{book['id']}/read-progress"
    answer = await source.client.request("PATCH", url, content=b'{"page":2}', headers=JSON)
    assert answer.status_code == 204
    ref = book_of(book["id"])
    kept = await source_place(local_host, ref)
    assert kept is not None and (kept.page, kept.finished) == (1, False)
    answer = await source.client.request("PATCH", url, content=b'{"completed":true}', headers=JSON)
    kept = await source_place(local_host, ref)
    assert kept is not None and kept.finished and kept.page == kept.pages - 1
    for wrong in (b'{"page":0}', b'{"page":99}', b"{}", b'{"page":"2"}', b'{"completed":false}'):
        refused = await source.client.request("PATCH", url, content=wrong, headers=JSON)
        assert refused.status_code == 400, wrong
        assert parsed(refused)["status"] == 400
    answer = await source.client.request("DELETE", url)
    assert answer.status_code == 204
    assert await source_place(local_host, ref) is None


async def source_place(host: ServedHost, ref: ChapterRef) -> Position | None:
    return await host.core.progress.aposition("mika", ref)


async def test_wrong_credentials_are_a_401_the_app_gives_up_on(local_host: ServedHost) -> None:
    await add_reader(local_host, "mika", "hunter22")
    _, source = mihon(local_host, "mika", "wrong")
    with pytest.raises(HttpError) as refused:
        await source.popular(1)
    answer = refused.value.response
    assert answer.status_code == 401
    assert (answer.header("www-authenticate") or "").startswith("Basic ")
    body = parsed(answer)
    assert set(body) == {"timestamp", "status", "error", "message", "path"}
    assert (body["status"], body["error"], body["path"]) == (
        401,
        "Unauthorized",
        "/_/komga/api/v1/series",
    )
    assert len(source.client.exchanges) == 2  # one retry with Basic, then the app gives up


async def test_an_api_key_and_basic_up_front(local_host: ServedHost) -> None:
    key = await add_reader(local_host, "mika", "hunter22")
    answer = await local_host.client.get("/_/komga/api/v1/libraries", headers={"X-API-Key": key})
    assert answer.status_code == 200 and SESSION_COOKIE not in answer.headers.get("set-cookie", "")
    answer = await local_host.client.get("/_/komga/api/v1/libraries", auth=("mika", "hunter22"))
    assert answer.status_code == 200 and SESSION_COOKIE in answer.headers["set-cookie"]


async def test_aidoku_signs_in_up_front_and_reads(local_host: ServedHost) -> None:
    await add_reader(local_host, "mika", "hunter22")
    aidoku = aidoku_client(cast(AsyncHttpClient, local_host.client), "mika", "hunter22")
    listing = await aidoku.request("GET", f"{SERVER}/api/v1/series?page=0&size=20", check=True)
    assert [exchange.status_code for exchange in aidoku.exchanges] == [200]
    series = komga.Page[komga.SeriesDto].model_validate_json(listing.content).content[0]
    books = await aidoku.request(
        "GET", f"{SERVER}/api/v1/series/{series.id}/books?unpaged=true", check=True
    )
    book = komga.Page[komga.BookDto].model_validate_json(books.content).content[0]
    pages = await aidoku.request("GET", f"{SERVER}/api/v1/books/{book.id}/pages", check=True)
    assert len(parsed(pages)) == book.media.pagesCount > 0
    # A name that is not a reader is refused, with the challenge.
    stranger = aidoku_client(cast(AsyncHttpClient, local_host.client), "mika", "nope")
    refused = await stranger.request("GET", f"{SERVER}/api/v1/libraries")
    assert refused.status_code == 401


async def test_a_browser_signed_in_to_the_web_reader_and_the_face_keeps_both(
    local_host: ServedHost,
) -> None:
    """The web reader's cookie (path ``/_/``) reaches this face too: each session is read from
    its own cookie, whichever of the two the browser sends first."""
    await add_reader(local_host, "mika", "hunter22")
    await add_reader(local_host, "ren", "swordfish")
    browser = local_host.client
    web = await browser.post("/_/web/session", json={"name": "ren", "secret": "swordfish"})
    assert web.json()["reader"] == "ren"
    signed = await browser.get("/_/komga/api/v1/users/me", auth=("mika", "hunter22"))
    assert signed.status_code == 200 and SESSION_COOKIE in signed.headers["set-cookie"]
    assert len(browser.cookies.jar) == 2

    me = await browser.get("/_/komga/api/v2/users/me")
    assert me.status_code == 200, me.text
    assert "toshokan_session" in me.request.headers["cookie"]
    assert me.json()["email"] == "mika"
    assert (await browser.get("/_/web/session")).json()["reader"] == "ren"


async def test_the_session_cookie_follows_a_proxys_path_prefix(tmp_path: Path) -> None:
    """Behind a proxy serving the host under ``/comics``, the app's address is
    ``https://.../comics/_/komga``: the cookie's path must be under it to come back."""
    root = tmp_path / "library"
    write_demo_library(root, series=1, chapters=1, pages=1)
    async with serve_host(
        {"local": (LocalLibrary, LocalSettings(root=root, watch=False))},
        data_dir=tmp_path / "data",
        host={"secret": SECRET, "public_url": "https://comics.example.org/comics"},
        limits={"rate_limit": 0},
    ) as host:
        await add_reader(host, "mika", "hunter22")
        answer = await host.client.get("/_/komga/api/v1/libraries", auth=("mika", "hunter22"))
    assert answer.status_code == 200
    cookie = answer.headers["set-cookie"]
    assert "Path=/comics/_/komga" in cookie and "HttpOnly" in cookie


async def test_guessing_passwords_is_throttled_in_komgas_shape(local_host: ServedHost) -> None:
    await add_reader(local_host, "mika", "hunter22")
    statuses = []
    for attempt in range(ATTEMPTS + 1):
        answer = await local_host.client.get(
            "/_/komga/api/v1/libraries", auth=("mika", f"guess {attempt}")
        )
        statuses.append(answer.status_code)
    assert statuses == [401] * ATTEMPTS + [429]
    assert int(answer.headers["retry-after"]) >= 1
    assert answer.json()["status"] == 429
    # The right password waits too: the budget is the client's.
    right = await local_host.client.get("/_/komga/api/v1/libraries", auth=("mika", "hunter22"))
    assert right.status_code == 429
