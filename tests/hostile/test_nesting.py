"""JSON nested beyond any search or credential's need is refused by name, on every face taking
bodies."""

import pytest

from toshokan.config import LimitsSection
from toshokan.core.bodies import MAX_JSON_DEPTH

pytestmark = pytest.mark.anyio

BODY_PATHS = [
    "/catalog/search",
    "/catalog/authenticate",
    "/_/alethia/catalog/search",
    "/_/alethia/catalog/authenticate",
]


def nested(depth: int, opener: str = "[", closer: str = "]") -> bytes:
    return (opener * depth + closer * depth).encode()


def nested_objects(depth: int) -> bytes:
    """``{"query": {"query": ... {} }}``: the shape a search's fields would nest in."""
    return ('{"query":' * depth + "{}" + "}" * depth).encode()


@pytest.mark.parametrize("path", BODY_PATHS)
@pytest.mark.parametrize(
    "body",
    [
        nested(MAX_JSON_DEPTH + 1),
        nested(1_000),
        nested(30_000),  # deep enough to exhaust the parser's recursion, within the size limit
        nested_objects(1_000),
        nested_objects(5_000),
        b'{"page": 1, "sort": "title", "filters": {"year": ' + nested(1_000) + b"}}",
    ],
    ids=["just-too-deep", "arrays-1000", "arrays-30000", "objects-1000", "objects-5000", "field"],
)
async def test_deep_json_is_400_naming_the_depth_limit(make_host, path, body):
    assert len(body) <= LimitsSection().max_body_bytes
    async with make_host(auth="api_key", limits={"rate_limit": 0}) as host:
        answer = await host.client.post(
            path, content=body, headers={"content-type": "application/json"}
        )
        assert host.source("catalog").calls.get("search", 0) == 0
    assert answer.status_code == 400, answer.text[:300]
    error = answer.json()["error"]
    assert error["code"] == "INVALID_REQUEST"
    assert f"{MAX_JSON_DEPTH} levels" in error["message"]


async def test_json_at_the_depth_limit_is_still_read(make_host):
    """The bound refuses nesting no search needs, not the deepest a valid search has."""
    filters = {"year": 2001, "includeTag": ["action"]}
    async with make_host(limits={"rate_limit": 0}) as host:
        ok = await host.client.post(
            "/catalog/search", json={"page": 1, "sort": "title", "filters": filters}
        )
        at_limit = await host.client.post("/catalog/search", content=nested(MAX_JSON_DEPTH))
    assert ok.status_code == 200
    # As deep as allowed: read, then refused for its shape, not its depth.
    assert at_limit.status_code == 400
    assert f"{MAX_JSON_DEPTH} levels" not in at_limit.json()["error"]["message"]


@pytest.mark.parametrize("path", BODY_PATHS)
async def test_json_nested_100000_deep_is_a_4xx_error(make_host, path):
    """A hundred thousand levels take more bytes than a body may have: refused before parsing."""
    async with make_host(limits={"rate_limit": 0}) as host:
        answers = [
            await host.client.post(path, content=body)
            for body in (nested(100_000), b"[" * 100_000, nested_objects(100_000))
        ]
    for answer in answers:
        assert 400 <= answer.status_code < 500, answer.text[:300]
        assert answer.json()["error"]["code"] == "INVALID_REQUEST"
