"""Authentication for all six types: the endpoint, the headers, enforcement and forwarding."""

import base64
import logging

import pytest

from tests.helpers.catalog import SECRETS

pytestmark = pytest.mark.anyio

GOOD = {
    "basic": {"username": SECRETS["username"], "password": SECRETS["password"]},
    "session": {"username": SECRETS["username"], "password": SECRETS["password"]},
    "api_key": {"apiKey": SECRETS["apiKey"]},
    "bearer": {"token": SECRETS["token"]},
    "cookie": {"cookie": "session=good"},
}
BAD = {
    "basic": {"username": "reader", "password": "wrong"},
    "session": {"username": "reader", "password": "wrong"},
    "api_key": {"apiKey": "nope"},
    "bearer": {"token": "nope"},
    "cookie": {"cookie": "session=bad"},
}
EXPECTED_HEADERS = {
    "basic": {"Authorization": "Basic " + base64.b64encode(b"reader:s3cret-pass").decode()},
    "session": {"Cookie": "session=good"},
    "api_key": {"X-API-Key": SECRETS["apiKey"]},
    "bearer": {"Authorization": f"Bearer {SECRETS['token']}"},
    "cookie": {"Cookie": "session=good"},
}
FIELDS = {
    "basic": ["username", "password"],
    "session": ["username", "password"],
    "api_key": ["apiKey"],
    "bearer": ["token"],
    "cookie": ["cookie"],
}


async def test_none_accepts_anything(make_client):
    async with make_client() as (client, _):
        for body in (b"{}", b"", b'{"x": 1}'):
            response = await client.post("/catalog/authenticate", content=body)
            assert response.status_code == 200
            assert response.json() == {"success": True, "headers": {}}


@pytest.mark.parametrize("auth_type", list(GOOD))
async def test_each_type_end_to_end(make_client, auth_type):
    sources = {"catalog": {"auth": auth_type, "required": True}}
    async with make_client(sources=sources) as (client, hosted_sources):
        config = (await client.get("/catalog")).json()
        assert config["auth"] == {"type": auth_type, "required": True, "fields": FIELDS[auth_type]}

        missing = await client.post("/catalog/authenticate", json={})
        assert missing.status_code == 400
        assert (
            missing.json()["success"] is False
            and missing.json()["error"]["code"] == "MISSING_FIELDS"
        )
        for name in FIELDS[auth_type]:
            assert name in missing.json()["error"]["message"]

        bad = await client.post("/catalog/authenticate", json=BAD[auth_type])
        assert bad.status_code == 401
        assert bad.json() == {
            "success": False,
            "error": {"code": "INVALID_CREDENTIALS", "message": bad.json()["error"]["message"]},
        }

        good = await client.post("/catalog/authenticate", json=GOOD[auth_type])
        assert good.status_code == 200, good.text
        headers = good.json()["headers"]
        assert good.json()["success"] is True and headers == EXPECTED_HEADERS[auth_type]

        # Required: refused before the adapter is called without or with wrong headers...
        for sent in ({}, {name: "garbage" for name in headers}):
            for path in (
                "/catalog/title-001",
                "/catalog/title-001/chapters",
                "/catalog/title-001/chapters/c1",
            ):
                refused = await client.get(path, headers=sent)
                assert (
                    refused.status_code == 401
                    and refused.json()["error"]["code"] == "INVALID_CREDENTIALS"
                )
            refused = await client.post(
                "/catalog/search", json={"page": 1, "sort": "title"}, headers=sent
            )
            assert refused.status_code == 401
        source = hosted_sources.by_slug["catalog"].source
        assert not any(source.calls.get(k) for k in ("manga", "chapters", "pages", "search"))

        # ...and served, with the headers forwarded to the adapter, when they are right.
        ok = await client.get("/catalog/title-001", headers=headers)
        assert ok.status_code == 200
        assert ok.headers["cache-control"].startswith("private")
        assert (
            await client.post("/catalog/search", json={"page": 1, "sort": "title"}, headers=headers)
        ).status_code == 200
        assert (
            await client.get("/catalog/title-001/chapters/c1", headers=headers)
        ).status_code == 200
    assert source.seen_auth and all(seen == headers for seen in source.seen_auth)


async def test_bad_bodies_use_failure_form(make_client):
    async with make_client(sources={"catalog": {"auth": "basic"}}) as (client, _):
        not_json = await client.post("/catalog/authenticate", content=b"{nope")
        array = await client.post("/catalog/authenticate", json=["reader"])
        wrong_type = await client.post(
            "/catalog/authenticate", json={"username": 1, "password": "x"}
        )
    assert not_json.status_code == 400 and not_json.json()["error"]["code"] == "INVALID_REQUEST"
    assert array.status_code == 400 and array.json()["success"] is False
    assert wrong_type.json()["error"]["code"] == "MISSING_FIELDS"


async def test_too_many_failed_attempts_is_rate_limited(make_client):
    sources = {"catalog": {"auth": "api_key"}}
    async with make_client(sources=sources, limits={"auth_attempts": 3}) as (
        client,
        hosted_sources,
    ):
        for _ in range(3):
            assert (
                await client.post("/catalog/authenticate", json={"apiKey": "wrong"})
            ).status_code == 401
        verified = hosted_sources.by_slug["catalog"].source.calls["verify"]
        limited = await client.post("/catalog/authenticate", json={"apiKey": SECRETS["apiKey"]})
        assert (
            hosted_sources.by_slug["catalog"].source.calls["verify"] == verified
        )  # upstream spared
    assert limited.status_code == 429
    assert limited.json()["error"]["code"] == "RATE_LIMITED"
    assert int(limited.headers["retry-after"]) >= 1


async def test_optional_auth_serves_anonymous_requests(make_client):
    async with make_client(sources={"catalog": {"auth": "bearer", "required": False}}) as (
        client,
        hosted_sources,
    ):
        anonymous = await client.get("/catalog/title-001")
        with_token = await client.get("/catalog/title-001", headers={"Authorization": "Bearer t"})
    assert anonymous.status_code == 200 and anonymous.headers["cache-control"].startswith("public")
    assert with_token.headers["cache-control"].startswith("private")
    assert hosted_sources.by_slug["catalog"].source.seen_auth == [{}, {"Authorization": "Bearer t"}]


@pytest.mark.parametrize("auth_type", list(GOOD))
async def test_credentials_never_reach_logs(make_client, caplog, auth_type):
    caplog.set_level(logging.DEBUG)
    secrets = [v for v in GOOD[auth_type].values()] + list(EXPECTED_HEADERS[auth_type].values())
    async with make_client(sources={"catalog": {"auth": auth_type, "required": True}}) as (
        client,
        _,
    ):
        good = await client.post("/catalog/authenticate", json=GOOD[auth_type])
        headers = good.json()["headers"]
        await client.post(
            "/catalog/authenticate", json={k: v + "x" for k, v in GOOD[auth_type].items()}
        )
        await client.get("/catalog/title-001", headers=headers)
        await client.get("/catalog/crash", headers=headers)
        await client.post("/catalog/search", json={"page": 1, "sort": "title"}, headers=headers)
    logged = "\n".join(r.getMessage() + str(r.exc_info or "") + str(r.args) for r in caplog.records)
    assert "unhandled error" in logged  # the capture really saw the host's logs
    for secret in secrets:
        assert secret not in logged
        assert secret.split(" ")[-1] not in logged


async def test_checking_credentials_and_the_content_share_one_deadline(make_client):
    """Credentials checked upstream and the search after them fit in one upstream_timeout."""
    sources = {"catalog": {"auth": "api_key", "required": True, "verify_delay": 0.7, "delay": 0.7}}
    async with make_client(sources=sources, server={"upstream_timeout": 1}) as (client, _):
        response = await client.post(
            "/catalog/search",
            json={"page": 1, "sort": "title"},
            headers={"X-API-Key": SECRETS["apiKey"]},
        )
    # Each step alone fits in the deadline; together they do not.
    assert response.status_code == 504
    assert response.json()["error"]["code"] == "UPSTREAM_TIMEOUT"


def assert_failure_form(response, status: int, code: str) -> None:
    """The spec's failure form, ``{success: false, error: {code, message}}``, nothing else."""
    assert response.status_code == status, response.text
    body = response.json()
    assert body == {"success": False, "error": {"code": code, "message": body["error"]["message"]}}
    assert body["error"]["message"]


@pytest.mark.parametrize("prefix", ["", "/_/alethia"])
async def test_every_failure_of_the_endpoint_uses_failure_form(make_client, prefix):
    """Whether the host's edge, its router or the source refuses, on every face serving it."""
    sources = {"catalog": {"auth": "basic"}}
    endpoint = f"{prefix}/catalog/authenticate"
    limits = {"max_body_bytes": 1024, "max_headers": 20}
    async with make_client(sources=sources, limits=limits) as (client, hosted_sources):
        unknown = await client.post(f"{prefix}/nosuch/authenticate", json={})
        many_headers = await client.post(
            endpoint, json={}, headers={f"x-h{n}": "v" for n in range(30)}
        )
        too_large = await client.post(endpoint, content=b"{" + b" " * 2048 + b"}")
        not_json = await client.post(endpoint, content=b"{nope")
        bad_length = await client.post(endpoint, headers={"content-length": "nope"})
        missing = await client.post(endpoint, json={})

        async def broken(*args: object) -> dict[str, str]:
            raise RuntimeError("a bug")

        hosted_sources.by_slug["catalog"].source.authenticate = broken
        bug = await client.post(endpoint, json=GOOD["basic"])
        documented = (await client.get("/openapi.json")).json()
    assert_failure_form(unknown, 404, "SOURCE_NOT_FOUND")
    assert_failure_form(many_headers, 431, "INVALID_REQUEST")
    assert_failure_form(too_large, 413, "INVALID_REQUEST")
    assert_failure_form(not_json, 400, "INVALID_REQUEST")
    assert_failure_form(bad_length, 400, "INVALID_REQUEST")
    assert_failure_form(missing, 400, "MISSING_FIELDS")
    assert_failure_form(bug, 500, "INTERNAL_ERROR")
    # The OpenAPI document promises the same form for every one of these statuses.
    answers = documented["paths"]["/{source}/authenticate"]["post"]["responses"]
    for status in (404, 431, 413, 400, 500):
        schema = answers[str(status)]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/AuthResponse"}


@pytest.mark.parametrize("prefix", ["", "/_/alethia"])
async def test_a_client_over_its_rate_limit_is_told_in_failure_form(make_client, prefix):
    async with make_client(limits={"rate_limit": 2}) as (client, _):
        for _ in range(2):
            await client.get("/catalog")
        limited = await client.post(f"{prefix}/catalog/authenticate", json={})
        elsewhere = await client.post("/catalog/search", json={"page": 1, "sort": "title"})
    assert_failure_form(limited, 429, "RATE_LIMITED")
    assert int(limited.headers["retry-after"]) >= 1
    assert elsewhere.json()["error"]["code"] == "RATE_LIMITED" and "success" not in elsewhere.json()
