"""The OpenAPI document speaks of this host: its slugs as the parameters' examples, its answers
as the examples of every operation, so the docs page's "Try it out" sends what the host answers."""

from typing import Any

import pytest

from tests.helpers.catalog import Catalog
from toshokan.errors import UpstreamError
from toshokan.models import Chapter
from toshokan.sdk import RequestContext
from toshokan.testing import serve_host

pytestmark = pytest.mark.anyio


def example(document: dict[str, Any], path: str, status: str = "200") -> Any:
    operation = next(iter(document["paths"][path].values()))
    return operation["responses"][status]["content"]["application/json"].get("example")


def parameters(document: dict[str, Any], path: str) -> dict[str, Any]:
    operation = next(iter(document["paths"][path].values()))
    return {p["name"]: p.get("example") for p in operation["parameters"]}


async def test_every_parameter_and_answer_is_the_hosts_own(make_client) -> None:
    async with make_client() as (client, _):
        document = (await client.get("/openapi.json")).json()
        slugs = parameters(document, "/{source}/{manga}/chapters/{chapter}")
        assert slugs["source"] == "catalog"
        for path, answer in document["paths"].items():
            if path.startswith("/_/"):
                continue  # the host's own APIs: their answers are checked by their faces' tests
            url = path.format(**slugs)
            method, _ = next(iter(answer.items()))
            if method == "get":
                live = await client.get(url)
                assert live.status_code == 200, url
                if path not in ("/{source}/ping",):
                    shown = example(document, path)
                    assert shown == live.json() or shown == live.json()[: len(shown)], path
        search = document["paths"]["/{source}/search"]["post"]
        bodies = search["requestBody"]["content"]["application/json"]["examples"]
        for body in bodies.values():
            answered = await client.post("/catalog/search", json=body["value"])
            assert answered.status_code == 200, body
        assert example(document, "/{source}/search")["page"] == 1
        assert example(document, "/{source}/{manga}", "404")["error"]["code"] == "MANGA_NOT_FOUND"
        assert example(document, "/{source}", "404")["error"]["code"] == "SOURCE_NOT_FOUND"
        failure = example(document, "/{source}/authenticate", "401")
        assert failure["success"] is False and failure["error"]["code"] == "INVALID_CREDENTIALS"


async def test_a_source_that_needs_signing_in_is_named_but_not_asked(make_client) -> None:
    async with make_client(sources={"vault": {"auth": "basic", "required": True}}) as (
        client,
        hosted_sources,
    ):
        document = (await client.get("/openapi.json")).json()
        assert parameters(document, "/{source}/search")["source"] == "vault"
        assert parameters(document, "/{source}/{manga}")["manga"] is None
        # Nothing invented where nothing was asked: an empty page, counted from 1.
        assert example(document, "/{source}/search") == {"results": [], "page": 1, "more": False}
        assert hosted_sources.get("vault").source.calls.get("search", 0) == 0


class Broken(Catalog):
    """A catalog whose chapter lists fail, as an upstream that is down does."""

    async def chapters(self, manga_slug: str, ctx: RequestContext) -> list[Chapter]:
        raise UpstreamError("The upstream failed with HTTP 503.")


async def test_what_the_upstream_could_not_answer_is_left_out(tmp_path) -> None:
    async with serve_host(
        {"catalog": (Broken, {})}, data_dir=tmp_path, base_url="http://testhost"
    ) as served:
        answered = await served.client.get("/openapi.json")
    assert answered.status_code == 200
    document = answered.json()
    assert parameters(document, "/{source}/{manga}")["manga"] == "title-000"
    assert parameters(document, "/{source}/{manga}/chapters/{chapter}")["chapter"] is None
    assert example(document, "/{source}/{manga}")["title"] == "Title 000"
    assert example(document, "/{source}/{manga}/chapters") is None
