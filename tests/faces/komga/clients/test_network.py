"""The client harness against a small Komga stand-in: sign-in, cookies, and the requests each app sends."""

import base64
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from . import samples
from .aidoku_source import AidokuKomgaSource, AidokuSourceError, condition
from .mihon_extension import MihonKomgaSource, SearchFilters, Sort
from .mihon_tracker import COMPLETED, READING, MihonKomgaTracker
from .okhttp_session import HttpError, MihonNetwork, aidoku_client

pytestmark = pytest.mark.anyio

SERIES_ID = samples.series()["id"]
BOOK_ID = samples.book()["id"]


@dataclass
class StandIn:
    """Komga's sign-in as its security configuration behaves, over canned answers."""

    cookie_attributes: str = "Path=/; HttpOnly; SameSite=Lax"
    seen: list[Request] = field(default_factory=list)
    puts: list[bytes] = field(default_factory=list)
    posts: list[tuple[str, str, Any]] = field(default_factory=list)
    read_up_to: float = 1.0

    def signed_in(self, request: Request) -> bool:
        expected = "Basic " + base64.b64encode(b"reader:secret").decode()
        return (
            request.headers.get("authorization") == expected
            or request.cookies.get("KOMGA-SESSION") == "c2Vzc2lvbg=="
        )

    async def answer(self, request: Request) -> Response:
        self.seen.append(request)
        if not self.signed_in(request):
            return JSONResponse(
                {
                    "timestamp": "2024-03-01T10:15:30.123+00:00",
                    "status": 401,
                    "error": "Unauthorized",
                    "message": "Unauthorized",
                    "path": request.url.path,
                },
                401,
                headers={"WWW-Authenticate": 'Basic realm="Realm"'},
            )
        path = request.url.path
        body: Any
        if request.method == "POST":
            self.posts.append((path, request.url.query, json.loads(await request.body())))
            epub = samples.book(id="E1")
            epub["media"].update(mediaType="application/epub+zip", mediaProfile="EPUB")
            body = samples.page_of(
                [samples.series()] if path == "/api/v1/series/list" else [samples.book(), epub]
            )
        elif path == "/api/v2/users/me":
            body = {"id": "U1", "email": "reader", "roles": ["USER"]}
        elif path == "/api/v1/series":
            body = samples.page_of([samples.series()], total=21)
        elif path == f"/api/v1/series/{SERIES_ID}":
            body = samples.series()
        elif path == f"/api/v1/series/{SERIES_ID}/books":
            second = samples.book(id="B2", number=2)
            second["metadata"].update(number="2", numberSort=2.0, title="", releaseDate=None)
            body = samples.page_of([samples.book(), second])
        elif path == f"/api/v1/books/{BOOK_ID}/pages":
            body = samples.pages()
        elif path.startswith(f"/api/v1/books/{BOOK_ID}/pages/"):
            return Response(b"\xff\xd8\xff", media_type="image/jpeg")
        elif path == f"/api/v2/series/{SERIES_ID}/read-progress/tachiyomi":
            if request.method == "PUT":
                self.puts.append(await request.body())
                self.read_up_to = json.loads(self.puts[-1])["lastBookNumberSortRead"]
                return Response(status_code=204)
            read = sum(1 for number in (1.0, 2.0, 3.0) if number <= self.read_up_to)
            body = samples.tachiyomi_progress_v2() | {
                "booksReadCount": read,
                "booksUnreadCount": 3 - read,
                "booksInProgressCount": 0,
                "lastReadContinuousNumberSort": float(read),
            }
        else:
            return JSONResponse({"status": 404}, 404)
        response = JSONResponse(body)
        if "authorization" in request.headers:
            response.headers["Set-Cookie"] = f"KOMGA-SESSION=c2Vzc2lvbg==; {self.cookie_attributes}"
        return response

    def app(self) -> Starlette:
        return Starlette(
            routes=[Route("/{path:path}", self.answer, methods=["GET", "PUT", "POST"])]
        )


@pytest.fixture
def komga() -> StandIn:
    return StandIn()


@pytest.fixture
async def transport(komga: StandIn) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=komga.app()), base_url="http://testserver"
    ) as client:
        yield client


BASE = "http://testserver"


async def test_mihon_signs_in_after_a_401_then_rides_the_session_cookie(komga, transport):
    network = MihonNetwork(transport)
    source = MihonKomgaSource(network.extension_client("reader", "secret"), BASE)
    page = await source.popular(1)
    assert page.has_next_page and page.mangas[0].title == "Blame!"
    first, retry = komga.seen
    assert "authorization" not in first.headers and "cookie" not in first.headers
    assert retry.headers["authorization"].startswith("Basic ")
    assert retry.headers["user-agent"].startswith("TachiyomiKomga/")
    await source.latest(1)
    assert "authorization" not in komga.seen[-1].headers
    assert komga.seen[-1].cookies == {"KOMGA-SESSION": "c2Vzc2lvbg=="}


async def test_the_listing_requests_are_the_extensions(komga, transport):
    source = MihonKomgaSource(
        MihonNetwork(transport).extension_client("reader", "secret"), BASE, default_libraries=["L1"]
    )
    await source.popular(2)
    await source.latest(1)
    filters = SearchFilters(
        unread=True,
        libraries=("L1", "L2"),
        statuses=("Ongoing", "Hiatus"),
        genres=("Sci-Fi", "Action"),
        authors=(("Tsutomu Nihei", "writer"),),
        sort=Sort(2, False),
    )
    await source.search(1, "blame city", filters)
    await source.search(1, "", None)
    queries = [
        request.url.query
        for request in komga.seen
        if "authorization" in request.headers or "cookie" in request.headers
    ]
    assert queries == [
        "search=&page=1&deleted=false&library_id=L1&sort=metadata.titleSort%2Casc",
        "search=&page=0&deleted=false&library_id=L1&sort=lastModifiedDate%2Cdesc",
        "search=blame%20city&page=0&deleted=false&read_status=UNREAD&read_status=IN_PROGRESS"
        "&library_id=L1%2CL2&status=ONGOING%2CHIATUS&genre=Sci-Fi%2CAction"
        "&author=Tsutomu%20Nihei%2Cwriter&sort=createdDate%2Cdesc",
        "search=&page=0&deleted=false&library_id=L1&sort=relevance%2Casc",
    ]


async def test_chapters_pages_and_images_as_mihon_reads_them(komga, transport):
    source = MihonKomgaSource(MihonNetwork(transport).extension_client("reader", "secret"), BASE)
    chapters = await source.chapters(SERIES_ID)
    assert [(chapter.chapter_number, chapter.name) for chapter in chapters] == [
        (2.0, "2 -  (23.2 MiB)"),
        (1.0, "1 - Net Sphere (23.2 MiB)"),
    ]
    assert komga.seen[-1].url.query == "unpaged=true&media_status=READY&deleted=false"
    pages = await source.page_list(chapters[1].url)
    assert [page.image_url for page in pages] == [
        f"{BASE}/api/v1/books/{BOOK_ID}/pages/1",
        f"{BASE}/api/v1/books/{BOOK_ID}/pages/2?convert=png",
    ]
    image = await source.page_image(pages[0].image_url)
    assert image.content.startswith(b"\xff\xd8")
    assert komga.seen[-1].headers["accept"] == "image/*,*/*;q=0.8"


async def test_the_tracker_rides_the_extensions_cookie_and_moves_progress(komga, transport):
    network = MihonNetwork(transport)
    source = MihonKomgaSource(network.extension_client("reader", "secret"), BASE)
    manga = (await source.popular(1)).mangas[0]
    tracker = MihonKomgaTracker(network.tracker_client())
    bound = await tracker.bind(manga.url, {1.0: False, 2.0: False, 3.0: False})
    assert bound is not None
    track, local = bound
    assert local == {1.0: True, 2.0: False, 3.0: False}
    assert (track.last_chapter_read, track.total_chapters, track.status) == (1.0, 3, READING)
    track = await tracker.chapter_read(track, 3.0)
    assert komga.puts[-1] == b'{"lastBookNumberSortRead":3.0}'
    assert track.status == COMPLETED
    tracker_requests = [
        request for request in komga.seen if request.headers["user-agent"].startswith("Mihon ")
    ]
    assert tracker_requests and all(
        "authorization" not in request.headers for request in tracker_requests
    )


async def test_a_cookie_scoped_to_api_v1_does_not_reach_the_trackers_v2_calls(komga, transport):
    komga.cookie_attributes = "HttpOnly"  # no Path: OkHttp scopes it to the directory that set it
    network = MihonNetwork(transport)
    source = MihonKomgaSource(network.extension_client("reader", "secret"), BASE)
    await source.popular(1)
    assert [cookie.path for cookie in network.jar] == ["/api/v1"]
    tracker = MihonKomgaTracker(network.tracker_client())
    with pytest.raises(HttpError) as failure:
        await tracker.get_track_search(f"{BASE}/api/v1/series/{SERIES_ID}")
    assert failure.value.code == 401
    assert await tracker.match(f"{BASE}/api/v1/series/{SERIES_ID}") is None


async def test_a_secure_cookie_is_kept_and_sent_over_https_only(komga, transport):
    komga.cookie_attributes = "Path=/; Secure; HttpOnly"
    network = MihonNetwork(transport)
    await MihonKomgaSource(network.extension_client("reader", "secret"), BASE).popular(1)
    assert list(network.jar) == []
    secure = MihonNetwork(transport)
    await MihonKomgaSource(
        secure.extension_client("reader", "secret"), "https://testserver"
    ).popular(1)
    assert [cookie.secure for cookie in secure.jar] == [True]
    tracker = MihonKomgaTracker(secure.tracker_client())
    assert (
        await tracker.get_track_search(f"https://testserver/api/v1/series/{SERIES_ID}")
    ).title == "Blame!"
    assert secure.jar.cookie_header(f"http://testserver/api/v1/series/{SERIES_ID}") is None


async def test_a_second_401_is_not_retried_and_an_api_key_never_sends_basic(komga, transport):
    network = MihonNetwork(transport)
    with pytest.raises(HttpError):
        await MihonKomgaSource(network.extension_client("reader", "wrong"), BASE).popular(1)
    assert len(komga.seen) == 2
    with pytest.raises(HttpError):
        await MihonKomgaSource(network.extension_client(api_key="key"), BASE).popular(1)
    assert len(komga.seen) == 3
    assert (
        komga.seen[-1].headers["x-api-key"] == "key"
        and "authorization" not in komga.seen[-1].headers
    )


async def test_aidoku_sends_basic_up_front(komga, transport):
    client = aidoku_client(transport, "reader", "secret")
    answer = await client.request("GET", f"{BASE}/api/v1/series/{SERIES_ID}", check=True)
    assert answer.status_code == 200 and len(komga.seen) == 1
    assert komga.seen[0].headers["accept"] == "application/json"


async def test_aidoku_signs_in_searches_and_tracks_with_basic_on_every_request(komga, transport):
    source = AidokuKomgaSource(aidoku_client(transport, "reader", "secret"), BASE)
    assert await source.login("reader")
    results = await source.search(
        1, "blame", [condition("genre", "is", "Sci-Fi")], sort=1, ascending=False
    )
    assert results.content[0].metadata.title == "Blame!"
    chapters = await source.chapters(SERIES_ID)
    assert [chapter.id for chapter in chapters] == [BOOK_ID]
    assert komga.posts == [
        (
            "/api/v1/series/list",
            "page=0&size=20&sort=createdDate%2Cdesc",
            {
                "condition": {
                    "allOf": [
                        {"deleted": {"operator": "isFalse"}},
                        {"genre": {"operator": "is", "value": "Sci-Fi"}},
                    ]
                },
                "fullTextSearch": "blame",
            },
        ),
        (
            "/api/v1/books/list",
            "unpaged=true&sort=metadata.numberSort%2Cdesc",
            {
                "condition": {
                    "allOf": [
                        {"seriesId": {"operator": "is", "value": SERIES_ID}},
                        {"deleted": {"operator": "isFalse"}},
                    ]
                }
            },
        ),
    ]
    assert (await source.tracker_state(SERIES_ID)).lastReadContinuousNumberSort == 1.0
    await source.tracker_update(SERIES_ID, 2.5)
    assert komga.puts == [b'{"lastBookNumberSortRead":2}']
    assert all(request.headers["authorization"].startswith("Basic ") for request in komga.seen)


async def test_aidoku_shows_the_error_field_of_komgas_error_body(komga, transport):
    source = AidokuKomgaSource(aidoku_client(transport, "reader", "wrong"), BASE)
    assert not await source.login("reader")
    with pytest.raises(AidokuSourceError) as failure:
        await source.series(SERIES_ID)
    assert str(failure.value) == "Unauthorized"


async def test_the_harness_also_drives_starlettes_test_client(komga):
    with TestClient(komga.app()) as client:
        source = MihonKomgaSource(MihonNetwork(client).extension_client("reader", "secret"), BASE)
        assert (await source.series_details(SERIES_ID)).title == "Blame!"
    assert len(komga.seen) == 2 and "authorization" in komga.seen[1].headers


async def test_collections_read_lists_and_books_change_the_path_and_the_alphabetical_sort(
    transport,
):
    source = MihonKomgaSource(MihonNetwork(transport).extension_client(), BASE)
    by_name = Sort(1, True)
    assert source.search_url(1, "", SearchFilters(collection="C1", sort=by_name)) == (
        f"{BASE}/api/v1/collections/C1/series?search=&page=0&deleted=false&sort=name%2Casc"
    )
    assert source.search_url(3, "x", SearchFilters(type=1, sort=by_name)) == (
        f"{BASE}/api/v1/readlists?search=x&page=2&deleted=false&sort=name%2Casc"
    )
    assert source.search_url(1, "", SearchFilters(type=2, sort=None, read=True)) == (
        f"{BASE}/api/v1/books?search=&page=0&deleted=false&read_status=READ"
    )
