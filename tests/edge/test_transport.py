"""CORS, rate limiting, trusted proxies, caching headers and conditional GET."""

import pytest

pytestmark = pytest.mark.anyio

ORIGIN = "https://reader.example"


async def test_preflight_is_204_with_auth_headers(make_client):
    async with make_client() as (client, _):
        response = await client.options(
            "/catalog/search",
            headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST"},
        )
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == "*"
    assert response.headers["access-control-allow-methods"] == "GET, POST, OPTIONS"
    allowed = {h.strip() for h in response.headers["access-control-allow-headers"].split(",")}
    assert {"Content-Type", "Authorization", "X-API-Key", "Cookie"} <= allowed


async def test_simple_requests_carry_cors(make_client):
    async with make_client() as (client, _):
        response = await client.get("/", headers={"Origin": ORIGIN})
        missing = await client.get("/nosuch", headers={"Origin": ORIGIN})
    assert response.headers["access-control-allow-origin"] == "*"
    assert missing.headers["access-control-allow-origin"] == "*"


async def test_scripts_of_other_origins_may_read_the_request_id(make_client):
    """A web app quotes the id of a request that failed; the browser shows it only if exposed."""
    async with make_client(cors={"origins": ["https://mine.example"]}) as (client, _):
        restricted = await client.get("/", headers={"Origin": "https://mine.example"})
    async with make_client() as (client, _):
        failed = await client.get("/nosuch", headers={"Origin": ORIGIN})
    for answer in (restricted, failed):
        exposed = answer.headers["access-control-expose-headers"].lower().split(", ")
        assert {"x-request-id", "etag", "retry-after"} <= set(exposed)
        assert answer.headers["x-request-id"]


async def test_restricted_origins_keep_the_tools_origin(make_client):
    cors = {"origins": ["https://mine.example"], "tools_origin": "https://tools.example"}
    async with make_client(cors=cors) as (client, _):
        mine = await client.get("/", headers={"Origin": "https://mine.example"})
        tools = await client.options(
            "/", headers={"Origin": "https://tools.example", "Access-Control-Request-Method": "GET"}
        )
        other = await client.get("/", headers={"Origin": "https://evil.example"})
        other_preflight = await client.options(
            "/", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"}
        )
    assert mine.headers["access-control-allow-origin"] == "https://mine.example"
    assert (
        tools.status_code == 204
        and tools.headers["access-control-allow-origin"] == "https://tools.example"
    )
    assert "access-control-allow-origin" not in other.headers
    assert (
        other_preflight.status_code == 403
        and other_preflight.json()["error"]["code"] == "INVALID_REQUEST"
    )


async def test_rate_limit_with_retry_after_and_health_exempt(make_client):
    async with make_client(limits={"rate_limit": 5}) as (client, _):
        statuses = [(await client.get("/")).status_code for _ in range(5)]
        limited = await client.get("/catalog")
        health = [(await client.get("/catalog/health")).status_code for _ in range(10)]
    assert statuses == [200] * 5
    assert limited.status_code == 429 and limited.json()["error"]["code"] == "RATE_LIMITED"
    assert 1 <= int(limited.headers["retry-after"]) <= 60
    assert health == [200] * 10


async def test_rate_limit_zero_disables(make_client):
    async with make_client(limits={"rate_limit": 0}) as (client, _):
        statuses = {(await client.get("/")).status_code for _ in range(150)}
    assert statuses == {200}


async def test_spoofed_forwarded_for_is_ignored_from_untrusted_peers(make_client):
    # The peer (203.0.113.7) is not a trusted proxy: its X-Forwarded-For must not buy fresh budgets.
    async with make_client(limits={"rate_limit": 3}) as (client, _):
        statuses = [
            (await client.get("/", headers={"X-Forwarded-For": f"198.51.100.{i}"})).status_code
            for i in range(5)
        ]
    assert statuses == [200, 200, 200, 429, 429]


async def test_forwarded_for_from_trusted_proxy_counts_real_clients(make_client):
    server = {"trusted_proxies": ["203.0.113.0/24"]}
    async with make_client(limits={"rate_limit": 2}, server=server) as (client, _):
        a = [
            (await client.get("/", headers={"X-Forwarded-For": "198.51.100.1"})).status_code
            for _ in range(3)
        ]
        b = (await client.get("/", headers={"X-Forwarded-For": "198.51.100.2"})).status_code
        # A client cannot hide behind a forged left-most entry: the proxy appends the real address.
        c = (
            await client.get("/", headers={"X-Forwarded-For": "1.1.1.1, 198.51.100.1"})
        ).status_code
    assert a == [200, 200, 429] and b == 200 and c == 429


async def test_forwarded_proto_and_host_shape_links_only_when_trusted(make_client):
    forwarded = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "comics.example"}
    async with make_client(server={"trusted_proxies": ["203.0.113.7"]}) as (client, _):
        trusted = (await client.get("/catalog/title-001/chapters/hosted", headers=forwarded)).json()
    async with make_client() as (client, _):
        untrusted = (
            await client.get("/catalog/title-001/chapters/hosted", headers=forwarded)
        ).json()
    async with make_client(host={"public_url": "https://fixed.example/"}) as (client, _):
        configured = (
            await client.get("/catalog/title-001/chapters/hosted", headers=forwarded)
        ).json()
    assert trusted == ["https://comics.example/_/catalog/pages/1"]
    assert untrusted == ["http://testhost/_/catalog/pages/1"]
    assert configured == ["https://fixed.example/_/catalog/pages/1"]


async def test_cache_control_per_kind(make_client):
    async with make_client() as (client, _):
        assert (await client.get("/")).headers["cache-control"] == "public, max-age=3600"
        assert (await client.get("/catalog")).headers["cache-control"] == "public, max-age=3600"
        search = await client.post("/catalog/search", json={"page": 1, "sort": "title"})
        assert search.headers["cache-control"] == "public, max-age=120"
        assert (await client.get("/catalog/title-001")).headers[
            "cache-control"
        ] == "public, max-age=900"
        assert (await client.get("/catalog/title-001/chapters")).headers[
            "cache-control"
        ] == "public, max-age=120"
        assert (await client.get("/catalog/title-001/chapters/c1")).headers[
            "cache-control"
        ] == "no-store"
        assert (await client.get("/catalog/ping")).headers["cache-control"] == "no-store"


async def test_etag_and_304(make_client):
    async with make_client() as (client, _):
        first = await client.get("/catalog/title-001")
        etag = first.headers["etag"]
        again = await client.get("/catalog/title-001", headers={"If-None-Match": etag})
        changed = await client.get("/catalog/title-001", headers={"If-None-Match": '"other"'})
        weak = await client.get("/catalog/title-001", headers={"If-None-Match": f"W/{etag}"})
        other = await client.get("/catalog/title-002")
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == etag and again.headers["cache-control"] == "public, max-age=900"
    assert changed.status_code == 200 and changed.json() == first.json()
    assert weak.status_code == 304
    assert other.headers["etag"] != etag
