"""Generated input: arbitrary bodies and path parameters never produce a 500 or a malformed error."""

import io
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from starlette.testclient import TestClient

from tests.helpers.hosts import catalog_sources
from toshokan.core.signing import expiry, sign
from toshokan.models import AuthResponse, SearchResponse
from toshokan.models.status import ErrorResponse
from toshokan.testing import build_app

GENERATED = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def tiny_png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 6), "white").save(out, "PNG")
    return out.getvalue()


PNG = tiny_png()


def image_server(request: httpx.Request) -> httpx.Response:
    """Every upstream image URL is a small picture, so reading pages needs no network."""
    return httpx.Response(200, content=PNG, headers={"content-type": "image/png"})


def make_app(tmp: Path):
    return build_app(
        catalog_sources(None),
        data_dir=tmp,
        upstream=httpx.MockTransport(image_server),
        limits={"rate_limit": 0, "image_rate_limit": 0},
    )


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with TestClient(make_app(tmp_path_factory.mktemp("generated"))) as test_client:
        yield test_client


def assert_well_formed(response) -> None:
    assert response.status_code < 500, response.text
    assert response.headers["content-type"].startswith("application/json")
    if response.status_code >= 400:
        body = response.json()
        if "success" in body:
            assert AuthResponse.model_validate(body).success is False
        else:
            ErrorResponse.model_validate(body)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)
search_bodies = st.fixed_dictionaries(
    {},
    optional={
        "query": json_values,
        "page": st.integers(-2, 5) | json_values,
        "limit": st.integers(-5, 120) | json_values,
        "sort": st.sampled_from(["title", "relevance", "latest", "views", ""]) | json_values,
        "direction": st.sampled_from(["asc", "desc", "up"]) | json_values,
        "filters": st.dictionaries(
            st.sampled_from(
                ["includeTag", "excludeTag", "year", "author", "status", "genre", "minChapters"]
            )
            | st.text(max_size=8),
            json_values
            | st.lists(st.sampled_from(["action", "romance", "gore", "nope"]), max_size=3),
            max_size=4,
        )
        | json_values,
    },
)


@GENERATED
@given(body=search_bodies)
def test_search_never_fails_badly(client, body):
    response = client.post("/catalog/search", json=body)
    assert_well_formed(response)
    if response.status_code == 200:
        result = SearchResponse.model_validate(response.json())
        assert result.page == body["page"]


@GENERATED
@given(raw=st.binary(max_size=200))
def test_raw_bodies(client, raw):
    assert_well_formed(
        client.post("/catalog/search", content=raw, headers={"content-type": "application/json"})
    )
    assert_well_formed(client.post("/catalog/authenticate", content=raw))


# -- nesting, sizes and numbers ------------------------------------------------------------
# Written as JSON text, not Python values: encoders refuse what a hostile client sends anyway
# (1e400, NaN, thousands of levels).

BOUNDED = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
SEARCH_FIELDS = ["query", "page", "limit", "sort", "direction", "filters"]
FILTER_KEYS = ["includeTag", "excludeTag", "year", "author", "status", "minChapters"]

number_texts = (
    st.integers(min_value=-(10**40), max_value=10**40).map(str)
    | st.sampled_from(["9223372036854775807", "9223372036854775808", "-9223372036854775809"])
    | st.floats(allow_nan=False, allow_infinity=False).map(repr)
    | st.sampled_from(["1e400", "-1e400", "1e-400", "-0.0", "1e20", "0.5", "NaN", "Infinity"])
    | st.sampled_from(["-Infinity", "1E+2", "10000000000" * 40])
)
odd_strings = st.sampled_from(
    ["NaN", "inf", "1e400", "-1", "0x10", "1_000", " 1", "²", "\u0663", "\uff11\uff12", ""]
) | st.text(max_size=20)
long_strings = st.integers(0, 70_000).map(lambda n: "x" * n)
json_strings = (odd_strings | long_strings).map(json.dumps)


def long_list(item: str) -> st.SearchStrategy[str]:
    return st.integers(0, 20_000).map(lambda n: "[" + ",".join([item] * n) + "]")


def nested_text(depth: int, kind: str, core: str) -> str:
    opener, closer = ("[", "]") if kind == "list" else ('{"a":', "}")
    return opener * depth + core + closer * depth


nested_values = st.builds(
    nested_text,
    st.integers(0, 3_000),
    st.sampled_from(["list", "object"]),
    number_texts | json_strings | st.just("{}"),
)
field_values = (
    number_texts
    | json_strings
    | nested_values
    | long_list('"action"')
    | long_list("1")
    | st.sampled_from(["null", "true", "[]", "{}"])
)
filter_values = st.dictionaries(st.sampled_from(FILTER_KEYS), field_values, max_size=3).map(
    lambda f: "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in f.items()) + "}"
)
hostile_bodies = (
    st.dictionaries(st.sampled_from(SEARCH_FIELDS), field_values | filter_values, max_size=5).map(
        lambda b: "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in b.items()) + "}"
    )
    | nested_values
)


@BOUNDED
@given(body=hostile_bodies)
def test_search_bodies_of_any_depth_size_and_number(client, body):
    for path in ("/catalog/search", "/_/alethia/catalog/search"):
        response = client.post(
            path, content=body.encode(), headers={"content-type": "application/json"}
        )
        assert_well_formed(response)
        if response.status_code == 200:
            SearchResponse.model_validate(response.json())


NUMBER_FIELDS = {"page": (1, 10_000), "limit": (1, 100), "year": (-1_000_000, 1_000_000)}


@BOUNDED
@given(field=st.sampled_from(sorted(NUMBER_FIELDS)), number=number_texts)
def test_numbers_in_a_search_are_whole_and_in_range(client, field, number):
    """200 for a whole number in the field's range, else 400 naming the field; never a 500."""
    if field == "year":
        body = f'{{"page": 1, "sort": "title", "filters": {{"year": {number}}}}}'
    else:
        body = f'{{"page": 1, "sort": "title", "{field}": {number}}}'
    value = json.loads(number)
    low, high = NUMBER_FIELDS[field]
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    response = client.post("/catalog/search", content=body.encode())
    assert_well_formed(response)
    if whole and low <= value <= high:
        assert response.status_code == 200, response.text
    else:
        assert response.status_code == 400, response.text
        assert field in response.json()["error"]["message"]


@BOUNDED
@given(length=st.integers(0, 2_000), items=st.integers(0, 300))
def test_long_texts_and_lists_in_a_search_are_bounded(client, length, items):
    """query is at most 500 characters and a filter list at most 100 items: 400 beyond."""
    long_query = {"page": 1, "sort": "title", "query": "t" * length}
    long_list = {"page": 1, "sort": "title", "filters": {"includeTag": ["action"] * items}}
    by_query = client.post("/catalog/search", json=long_query)
    by_list = client.post("/catalog/search", json=long_list)
    for response, fits, field in (
        (by_query, length <= 500, "query"),
        (by_list, items <= 100, "filters.includeTag"),
    ):
        assert_well_formed(response)
        assert response.status_code == (200 if fits else 400), response.text[:300]
        if not fits:
            assert field in response.json()["error"]["message"]


query_values = number_texts | odd_strings | long_strings.map(lambda text: text[:8_000])


def signed_image_link(client: TestClient, width: str) -> dict[str, str]:
    """A genuine link to an upstream image, at whatever width a client might ask for."""
    url = "https://img.catalog.example/title-001/c1/1.png"
    expires = expiry(60)
    app: Any = client.app
    secret = app.state.core.sources.services.secret
    signature = sign(secret, f"/_/image/catalog\n{url}\n{width}", expires)
    return {"u": url, "w": width, "exp": str(expires), "sig": signature}


@BOUNDED
@given(page=query_values, text=query_values, sort=query_values, width=query_values)
def test_query_parameters_of_any_size_and_number(client, page, text, sort, width):
    for path, params in (
        ("/_/opds/catalog/all", {"page": page, "sort": sort}),
        ("/_/opds/catalog/search", {"q": text, "page": page}),
        ("/_/opds/v2/catalog/search", {"query": text, "page": page}),
        ("/_/opds/catalog/series/title-001", {"page": page}),
        ("/_/opds/catalog/series/title-001/c1/pages/0", {"maxWidth": width}),
        ("/_/image/catalog", {"u": text, "w": width, "exp": page, "sig": sort}),
        ("/_/image/catalog", signed_image_link(client, width)),
    ):
        response = client.get(path, params=params)
        assert response.status_code < 500, (path, response.text[:300])
        if response.status_code >= 400:
            ErrorResponse.model_validate(response.json())


@GENERATED
@given(
    source=st.text(max_size=12),
    manga=st.text(max_size=30),
    chapter=st.text(max_size=30),
    method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH"]),
)
def test_path_parameters(client, source, manga, chapter, method):
    for path in (
        f"/{quote(source, safe='')}",
        f"/catalog/{quote(manga, safe='')}",
        f"/catalog/{quote(manga, safe='')}/chapters",
        f"/catalog/{quote(manga, safe='')}/chapters/{quote(chapter, safe='')}",
        f"/{quote(source, safe='')}/{quote(manga, safe='')}/chapters/{quote(chapter, safe='')}",
    ):
        response = client.request(method, path)
        assert_well_formed(response)


schema = schemathesis.openapi.from_asgi(
    "/openapi.json", make_app(Path("/tmp/toshokan-schemathesis"))
)


@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_openapi_operations(case):
    response = case.call()
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        body = response.json()
        if "success" in body:
            AuthResponse.model_validate(body)
        else:
            ErrorResponse.model_validate(body)
