"""Every row of the DECISIONS.md error table, and the Error object on every failure path."""

import pytest

from toshokan.models.status import ErrorResponse

pytestmark = pytest.mark.anyio


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["cache-control"] == "no-store"
    body = ErrorResponse.model_validate(response.json())
    assert body.error.code == code and body.error.message
    return response.json()


@pytest.mark.parametrize(
    ("body", "code", "fragment"),
    [
        (b"not json", "INVALID_REQUEST", "JSON"),
        (b"[1, 2]", "INVALID_REQUEST", "object"),
        (b'"text"', "INVALID_REQUEST", "object"),
        (b"{}", "MISSING_FIELDS", "page, sort"),
        (b'{"page": 1}', "MISSING_FIELDS", "sort"),
        (b'{"sort": "title"}', "MISSING_FIELDS", "page"),
        (b'{"page": 1, "sort": "views"}', "INVALID_REQUEST", "relevance, title, latest"),
        (
            b'{"page": 1, "sort": "title", "filters": {"genre": ["x"]}}',
            "INVALID_REQUEST",
            "includeTag",
        ),
        (b'{"page": 1, "sort": "title", "filters": {"year": "2020"}}', "INVALID_REQUEST", "year"),
        (
            b'{"page": 1, "sort": "title", "filters": {"author": ["a"]}}',
            "INVALID_REQUEST",
            "author",
        ),
        (
            b'{"page": 1, "sort": "title", "filters": {"status": "ongoing"}}',
            "INVALID_REQUEST",
            "array",
        ),
        (
            b'{"page": 1, "sort": "title", "filters": {"includeTag": ["nope"]}}',
            "INVALID_REQUEST",
            "nope",
        ),
        (
            b'{"page": 1, "sort": "title", "filters": {"excludeTag": ["action", 3]}}',
            "INVALID_REQUEST",
            "excludeTag",
        ),
        (b'{"page": 1, "sort": "title", "filters": []}', "INVALID_REQUEST", "filters"),
        (b'{"page": 1, "sort": "title", "limit": 0}', "INVALID_REQUEST", "limit"),
        (b'{"page": 1, "sort": "title", "limit": 101}', "INVALID_REQUEST", "limit"),
        (b'{"page": 1, "sort": "title", "limit": 2.5}', "INVALID_REQUEST", "limit"),
        (b'{"page": 0, "sort": "title"}', "INVALID_REQUEST", "page"),
        (b'{"page": true, "sort": "title"}', "INVALID_REQUEST", "page"),
        (b'{"page": 1, "sort": "title", "direction": "up"}', "INVALID_REQUEST", "direction"),
        (b'{"page": 1, "sort": "title", "query": 5}', "INVALID_REQUEST", "query"),
        # Bounds: nothing a source cannot represent reaches it.
        (b'{"page": 9223372036854775807, "sort": "title"}', "INVALID_REQUEST", "10000"),
        (b'{"page": 1, "sort": "title", "query": "\\ud800"}', "INVALID_REQUEST", "Unicode"),
        (
            b'{"page": 1, "sort": "title", "query": "' + b"x" * 501 + b'"}',
            "INVALID_REQUEST",
            "500 characters",
        ),
        (b'{"page": 1, "sort": "title", "filters": {"year": 1e20}}', "INVALID_REQUEST", "year"),
        (
            b'{"page": 1, "sort": "title", "filters": {"status": ['
            + b",".join([b'"ongoing"'] * 101)
            + b"]}}",
            "INVALID_REQUEST",
            "at most 100 items",
        ),
    ],
)
async def test_search_rejections(make_client, body, code, fragment):
    async with make_client() as (client, hosted_sources):
        response = await client.post(
            "/catalog/search", content=body, headers={"content-type": "application/json"}
        )
        calls = hosted_sources.by_slug["catalog"].source.calls
    payload = assert_error(response, 400, code)
    assert fragment in payload["error"]["message"]
    assert "search" not in calls  # the adapter never sees a rejected search


async def test_valid_filters_pass(make_client):
    body = {
        "page": 1,
        "sort": "title",
        "filters": {
            "includeTag": ["action"],
            "excludeTag": ["gore"],
            "year": 2020.0,
            "author": "x",
            "status": [],
        },
        "extra": "ignored",
    }
    async with make_client() as (client, _):
        response = await client.post("/catalog/search", json=body)
    assert response.status_code == 200


async def test_not_found_codes(make_client):
    async with make_client() as (client, _):
        assert_error(await client.get("/nosuch"), 404, "SOURCE_NOT_FOUND")
        assert_error(
            await client.post("/nosuch/search", json={"page": 1, "sort": "title"}),
            404,
            "SOURCE_NOT_FOUND",
        )
        assert_error(await client.get("/Catalog"), 404, "SOURCE_NOT_FOUND")
        assert_error(await client.get("/catalog/no-such-title"), 404, "MANGA_NOT_FOUND")
        assert_error(await client.get("/catalog/no-such-title/chapters"), 404, "MANGA_NOT_FOUND")
        assert_error(await client.get("/catalog/title-001/chapters/c99"), 404, "CHAPTER_NOT_FOUND")
        assert_error(await client.get("/catalog/Title%20001"), 404, "MANGA_NOT_FOUND")
        assert_error(
            await client.get("/catalog/title-001/chapters/..%2F..%2Fetc"), 404, "NOT_FOUND"
        )
        assert_error(
            await client.get("/catalog/title-001/chapters/c1%00.png"), 404, "CHAPTER_NOT_FOUND"
        )
        assert_error(await client.get("/catalog/title-001/extra/path/here/too"), 404, "NOT_FOUND")
        assert_error(await client.get("/_/nothing"), 404, "NOT_FOUND")
        assert_error(await client.get("/catalog/"), 404, "NOT_FOUND")


async def test_removed_source_is_gone_but_listed(make_client):
    async with make_client(sources={"catalog": {}, "old": {"status": "removed"}}) as (client, _):
        assert_error(await client.get("/old"), 404, "SOURCE_NOT_FOUND")
        manifest = (await client.get("/")).json()
    assert manifest["sources"] == ["catalog"]
    assert manifest["manifest"]["old"]["status"] == "removed"


async def test_wrong_method(make_client):
    async with make_client() as (client, _):
        assert_error(await client.get("/catalog/search"), 405, "INVALID_REQUEST")
        assert_error(await client.get("/catalog/authenticate"), 405, "INVALID_REQUEST")
        assert_error(await client.post("/catalog/health"), 405, "INVALID_REQUEST")
        assert_error(await client.delete("/catalog/title-001"), 405, "INVALID_REQUEST")
        assert_error(await client.put("/"), 405, "INVALID_REQUEST")


async def test_adapter_crash_is_internal_error_without_internals(make_client, caplog):
    async with make_client() as (client, _):
        response = await client.get("/catalog/crash", headers={"Origin": "https://reader.example"})
    body = assert_error(response, 500, "INTERNAL_ERROR")
    assert "secret" not in response.text and "Traceback" not in response.text
    assert body["error"]["message"] == "The host failed to answer this request."
    assert response.headers["access-control-allow-origin"] == "*"  # CORS survives a crash


async def test_upstream_error_passes_through(make_client):
    async with make_client() as (client, _):
        body = assert_error(await client.get("/catalog/flaky"), 502, "UPSTREAM_ERROR")
    assert "maintenance" in body["error"]["message"]
