"""Bounded input and refusals in Komga's shape: 400 for what cannot be asked, 404 for what is not
there, whatever the id or parameter a client makes up."""

import base64

import pytest

from tests.faces.komga.clients.mihon_extension_models import PageWrapperDto, ReadListDto
from toshokan.core.ids import MAX_ID
from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio

SPRING_ERROR = {"timestamp", "status", "error", "message", "path"}


def encoded(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


async def refused(host: ServedHost, path: str, status: int) -> None:
    answer = await host.client.get(path)
    assert answer.status_code == status, (path, answer.text[:200])
    body = answer.json()
    assert set(body) == SPRING_ERROR and body["status"] == status
    assert answer.headers["cache-control"] == "no-store"


@pytest.mark.parametrize(
    "series",
    [
        "nothing-here",
        encoded("local/no-such-work"),
        encoded("nosource/work"),
        encoded("local/UPPER"),
        encoded("local/a/b"),
        "A" * (MAX_ID + 1),
        "%00",
    ],
)
async def test_a_series_that_is_not_there_is_404(local_host: ServedHost, series: str) -> None:
    await refused(local_host, f"/_/komga/api/v1/series/{series}", 404)
    await refused(local_host, f"/_/komga/api/v2/series/{series}/read-progress/tachiyomi", 404)


async def test_books_and_pages_that_are_not_there_are_404(local_host: ServedHost) -> None:
    listing = (await local_host.client.get("/_/komga/api/v1/series?search=")).json()
    series_id = listing["content"][0]["id"]
    books = (await local_host.client.get(f"/_/komga/api/v1/series/{series_id}/books")).json()
    book = books["content"][0]["id"]
    await refused(local_host, f"/_/komga/api/v1/books/{book}/pages/0", 404)
    await refused(local_host, f"/_/komga/api/v1/books/{book}/pages/4", 404)
    await refused(local_host, f"/_/komga/api/v1/books/{book}/pages/1234567", 404)
    gone = encoded(base64.urlsafe_b64decode(book + "==").decode().rsplit("/", 1)[0] + "/gone")
    await refused(local_host, f"/_/komga/api/v1/books/{gone}", 404)
    await refused(local_host, "/_/komga/api/v1/libraries/nope", 404)
    await refused(local_host, "/_/komga/api/v1/nothing", 404)


@pytest.mark.parametrize(
    "query",
    [
        "page=-1",
        "page=abc",
        "page=10000",
        "size=0",
        "size=101",
        "search=" + "x" * 501,
        "genre=" + ",".join(["g"] * 101),
        "tag=" + "t" * 201,
    ],
)
async def test_series_queries_out_of_bounds_are_400(local_host: ServedHost, query: str) -> None:
    await refused(local_host, f"/_/komga/api/v1/series?{query}", 400)


async def test_a_read_list_the_host_does_not_keep_is_not_found(local_host: ServedHost) -> None:
    answer = await local_host.client.get("/_/komga/api/v1/readlists?search=&page=0&deleted=false")
    assert [found.id for found in PageWrapperDto[ReadListDto].decode(answer.content).content] == [
        "keep-reading",
        "new-chapters",
    ]
    await refused(local_host, "/_/komga/api/v1/readlists/abc", 404)
    await refused(local_host, "/_/komga/api/v1/readlists/abc/books", 404)
    await refused(local_host, "/_/komga/api/v1/readlists/abc/read-progress/tachiyomi", 404)


async def test_the_tracker_refuses_a_body_it_cannot_read(local_host: ServedHost) -> None:
    listing = (await local_host.client.get("/_/komga/api/v1/series?search=")).json()
    url = f"/_/komga/api/v2/series/{listing['content'][0]['id']}/read-progress/tachiyomi"
    for body in (
        b"{}",
        b'{"lastBookNumberSortRead":"one"}',
        b"[",
        b'{"lastBookNumberSortRead":1e99}',
    ):
        answer = await local_host.client.put(url, content=body)
        assert answer.status_code == 400, body
        assert set(answer.json()) == SPRING_ERROR


async def test_a_method_a_known_path_does_not_take_is_405(local_host: ServedHost) -> None:
    """Spring answers 405 with ``Allow``, not 404, for a path it serves with other methods."""
    listing = (await local_host.client.get("/_/komga/api/v1/series?search=")).json()
    series_url = f"/_/komga/api/v1/series/{listing['content'][0]['id']}"
    tracker_url = series_url.replace("/v1/", "/v2/")
    for method, path, allowed in (
        ("DELETE", series_url, {"GET", "HEAD"}),
        ("POST", "/_/komga/api/v1/libraries", {"GET", "HEAD"}),
        ("PUT", "/_/komga/api/v1/books/abc/read-progress", {"DELETE", "PATCH"}),
        ("POST", f"{tracker_url}/read-progress/tachiyomi", {"GET", "HEAD", "PUT"}),
    ):
        answer = await local_host.client.request(method, path)
        assert answer.status_code == 405, (method, path, answer.text[:200])
        body = answer.json()
        assert set(body) == SPRING_ERROR and body["status"] == 405
        assert body["error"] == "Method Not Allowed" and body["path"] == path
        assert set(answer.headers["allow"].split(", ")) == allowed
    await refused(local_host, "/_/komga/api/v1/nothing", 404)
