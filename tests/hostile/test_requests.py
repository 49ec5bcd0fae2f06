"""What one request may carry is bounded, with the Error object beyond the bounds."""

from typing import Any

import pytest

from toshokan.edge import Edge

pytestmark = pytest.mark.anyio


async def test_body_over_the_limit_is_413_naming_it(make_host):
    async with make_host(limits={"max_body_bytes": 2048}) as host:
        big = await host.client.post("/catalog/search", content=b"{" + b" " * 4096 + b"}")
        ok = await host.client.post("/catalog/search", json={"page": 1, "sort": "title"})
    assert big.status_code == 413
    assert big.json()["error"]["code"] == "INVALID_REQUEST"
    assert "2048 bytes" in big.json()["error"]["message"]
    assert ok.status_code == 200


async def test_a_raised_body_limit_lets_a_larger_body_through(make_host):
    """``max_body_bytes`` is the one limit: raised past 64 KiB, a larger search is read, and
    the OpenAPI document states the limit set."""
    limit = 256 * 1024
    search = {"page": 1, "sort": "title", "note": "x" * (128 * 1024)}
    async with make_host(limits={"max_body_bytes": limit}) as host:
        answer = await host.client.post("/catalog/search", json=search)
        document = (await host.client.get("/openapi.json")).json()
    assert answer.status_code == 200, answer.text[:300]
    body = document["paths"]["/{source}/search"]["post"]["requestBody"]
    assert f"At most {limit} bytes" in body["description"]


async def test_streamed_body_over_the_limit_is_413(make_host):
    async def chunks():
        for _ in range(10):
            yield b" " * 1024

    async with make_host(limits={"max_body_bytes": 4096}) as host:
        answer = await host.client.post("/catalog/search", content=chunks())
    assert answer.status_code == 413


async def test_too_many_headers_is_431(make_host):
    async with make_host(limits={"max_headers": 20}) as host:
        many = {f"x-h{n}": "v" for n in range(30)}
        answer = await host.client.get("/catalog", headers=many)
    assert answer.status_code == 431
    assert answer.json()["error"]["code"] == "INVALID_REQUEST"


async def test_oversized_headers_are_431(make_host):
    async with make_host(limits={"max_header_bytes": 2048}) as host:
        answer = await host.client.get("/catalog", headers={"x-big": "a" * 4000})
    assert answer.status_code == 431


async def test_bad_content_length_is_400(make_host):
    async with make_host() as host:
        app = host.app
        answer = await call(app, "POST", "/catalog/search", [(b"content-length", b"\xc2\xb2")])
    assert answer[0] == 400


async def test_slow_body_is_408(make_host):
    async with make_host(server={"body_timeout": 0.2}) as host:
        status, _ = await call(host.app, "POST", "/catalog/search", [], never_send=True)
    assert status == 408


async def test_client_leaving_mid_upload_is_one_line_not_a_500(make_host, caplog):
    async with make_host() as host:
        status, _ = await call(host.app, "POST", "/catalog/search", [], disconnect=True)
    assert status is None  # nothing is sent to a client that left
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]


async def test_a_bug_becomes_the_500_error_object(make_host, caplog):
    async with make_host() as host:
        edge: Edge = host.app.middleware_stack

        async def broken(scope: Any, receive: Any, send: Any) -> None:
            raise RuntimeError("a bug with a secret-token inside")

        edge.app = broken
        answer = await host.client.get("/catalog", headers={"Origin": "https://r.example"})
    assert answer.status_code == 500
    assert answer.json()["error"]["code"] == "INTERNAL_ERROR"
    assert "secret" not in answer.text
    assert answer.headers["access-control-allow-origin"] == "*"


async def test_a_bug_in_a_route_becomes_the_500_error_object(make_host):
    async with make_host() as host:
        catalog = host.source("catalog")

        async def broken(*args: Any) -> Any:
            raise RuntimeError("a bug")

        catalog.manga = broken
        answer = await host.client.get("/catalog/title-001")
    assert answer.status_code == 500
    assert answer.json()["error"]["code"] == "INTERNAL_ERROR"


async def call(
    app: Any,
    method: str,
    path: str,
    headers: list[tuple[bytes, bytes]],
    *,
    never_send: bool = False,
    disconnect: bool = False,
) -> tuple[int | None, bytes]:
    """Drive the ASGI app by hand, for what an HTTP client library will not send."""
    import asyncio

    sent: list[dict[str, Any]] = []
    first = True

    async def receive() -> dict[str, Any]:
        nonlocal first
        if never_send:
            await asyncio.sleep(60)
        if disconnect and not first:
            return {"type": "http.disconnect"}
        first = False
        if disconnect:
            return {"type": "http.request", "body": b"{", "more_body": True}
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testhost"), *headers],
        "client": ("203.0.113.7", 1234),
        "server": ("testhost", 80),
    }
    await app(scope, receive, send)
    status = next((m["status"] for m in sent if m["type"] == "http.response.start"), None)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body


async def test_long_search_texts_are_cached_under_a_small_key(make_host):
    query = "x" * 500  # the longest query a search may carry
    async with make_host(limits={"rate_limit": 0}) as host:
        first = await host.client.post(
            "/catalog/search", json={"query": query, "page": 1, "sort": "title"}
        )
        host.app.middleware_stack.replay.max_entries = 0  # the core's cache alone answers again
        await host.client.post("/catalog/search", json={"query": query, "page": 1, "sort": "title"})
        calls = host.source("catalog").calls["search"]
        keys = list(host.core.cache._stores["search"].keys())
    assert first.status_code == 200 and calls == 1
    assert keys and all(len(repr(key)) < 400 for key in keys)


async def test_every_answer_forbids_type_sniffing(make_host):
    async with make_host(limits={"rate_limit": 2}) as host:
        image = await host.client.get("/_/catalog/pages/1")
        first = await host.client.get("/catalog")
        replayed = await host.client.get("/catalog")
        limited = await host.client.get("/catalog")
    for answer in (image, first, replayed, limited):
        assert answer.headers["x-content-type-options"] == "nosniff"
    assert limited.status_code == 429


#: A path of each face and router: the spec's, OPDS (a mount), Alethia, the docs, a source's own.
EXACT_PATHS = [
    "/",
    "/catalog",
    "/catalog/health",
    "/catalog/title-001",
    "/_/opds",
    "/_/opds/catalog/all",
    "/_/opds/v2/catalog",
    "/_/alethia",
    "/_/alethia/catalog",
    "/_/docs",
    "/openapi.json",
    "/_/catalog/pages/1",
]


@pytest.mark.parametrize("path", EXACT_PATHS)
async def test_a_path_with_a_trailing_line_feed_reaches_no_route(make_host, path):
    """Route patterns match the whole path: ``$`` would also match before a final newline."""
    async with make_host() as host:
        exact = await host.client.get(path)
        with_newline = await host.client.get(path + "%0A")
        with_carriage_return = await host.client.get(path + "%0D%0A")
    assert exact.status_code == 200, exact.text[:200]
    for answer in (with_newline, with_carriage_return):
        assert answer.status_code == 404, answer.text[:200]
        assert answer.json()["error"]["code"] == "NOT_FOUND"
