"""The OpenAPI document and the host agree on what a search may carry.

Every bound the document publishes is sent at its limit (accepted) and one
past it (refused, naming the field); what the schema allows, such as a
``null`` filter, the host accepts.
"""

from typing import Any

import pytest

pytestmark = pytest.mark.anyio

BROWSE = {"page": 1, "sort": "title"}
#: Every bound the host enforces on a search, as "field: keyword" of the document.
ENFORCED = {
    "page: minimum",
    "page: maximum",
    "limit: minimum",
    "limit: maximum",
    "query: maxLength",
    "filters.status: maxItems",
    "filters.status[]: maxLength",
    "filters.includeTag: maxItems",
    "filters.excludeTag: maxItems",
    "filters.year: minimum",
    "filters.year: maximum",
    "filters.author: maxLength",
}


def resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The schema itself: references followed, the ``null`` branch of an optional dropped."""
    if "$ref" in schema:
        return resolve(document, document["components"]["schemas"][schema["$ref"].split("/")[-1]])
    branches = [s for s in schema.get("anyOf", []) if s.get("type") != "null"]
    return resolve(document, branches[0]) if len(branches) == 1 else schema


def cases(field: str, schema: dict[str, Any], item: str) -> list[tuple[str, Any, Any]]:
    """(bound, a value at it, a value past it) for each bound ``schema`` publishes."""
    found = []
    if "maximum" in schema:
        found.append((f"{field}: maximum", schema["maximum"], schema["maximum"] + 1))
    if "minimum" in schema:
        found.append((f"{field}: minimum", schema["minimum"], schema["minimum"] - 1))
    if "maxLength" in schema:
        length = schema["maxLength"]
        found.append((f"{field}: maxLength", "t" * length, "t" * (length + 1)))
    if "maxItems" in schema:
        count = schema["maxItems"]
        found.append((f"{field}: maxItems", [item] * count, [item] * (count + 1)))
    return found


async def test_every_bound_the_document_publishes_is_the_one_enforced(make_client):
    async with make_client() as (client, _):
        document = (await client.get("/openapi.json")).json()
        declared = (await client.get("/catalog")).json()["search"]
        tag = declared["tags"][0]["slug"]
        request = resolve(document, document["components"]["schemas"]["SearchRequest"])
        filters = resolve(document, request["properties"]["filters"])
        checked: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        for name in ("page", "limit", "query"):
            for bound, at, past in cases(name, request["properties"][name], ""):
                checked.append((bound, {**BROWSE, name: at}, {**BROWSE, name: past}))
        for key in declared["filters"]:
            schema = resolve(document, filters["properties"][key])
            tagged = key in ("includeTag", "excludeTag")
            for bound, at, past in cases(f"filters.{key}", schema, tag if tagged else "t"):
                checked.append(
                    (bound, {**BROWSE, "filters": {key: at}}, {**BROWSE, "filters": {key: past}})
                )
            # Items of a tag filter are slugs the source declares, none as long as the bound.
            if "items" in schema and not tagged:
                for bound, at, past in cases(f"filters.{key}[]", schema["items"], ""):
                    checked.append(
                        (
                            bound,
                            {**BROWSE, "filters": {key: [at]}},
                            {**BROWSE, "filters": {key: [past]}},
                        )
                    )
        assert {bound for bound, _, _ in checked} >= ENFORCED
        for bound, at, past in checked:
            accepted = await client.post("/catalog/search", json=at)
            refused = await client.post("/catalog/search", json=past)
            assert accepted.status_code == 200, (bound, accepted.text[:300])
            assert refused.status_code == 400, (bound, refused.text[:300])
            field = bound.split(":")[0].removesuffix("[]")
            assert field in refused.json()["error"]["message"], (bound, refused.text[:300])


async def test_null_filters_are_filters_left_out(make_client):
    """The schema makes every filter optional and nullable, as generated examples send them."""
    async with make_client() as (client, _):
        document = (await client.get("/openapi.json")).json()
        keys = document["components"]["schemas"]["Filters"]["properties"]
        every_null = {key: None for key in keys}  # the catalog declares only some of them
        with_nulls = await client.post("/catalog/search", json={**BROWSE, "filters": every_null})
        without = await client.post("/catalog/search", json=BROWSE)
        with_one = await client.post(
            "/catalog/search", json={**BROWSE, "filters": {"includeTag": ["action"], "year": None}}
        )
    assert with_nulls.status_code == 200, with_nulls.text[:300]
    assert with_nulls.json() == without.json()
    assert with_one.status_code == 200, with_one.text[:300]
