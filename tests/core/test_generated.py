"""Generated input: arbitrary bodies and path parameters never produce a 500 or a malformed error."""

from pathlib import Path
from urllib.parse import quote

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from tests.core.conftest import catalog_sources
from toshokan.models import AuthResponse, SearchResponse
from toshokan.models.status import ErrorResponse
from toshokan.testing import build_app

GENERATED = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def make_app(tmp: Path):
    return build_app(catalog_sources(None), data_dir=tmp, limits={"rate_limit": 0})


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
