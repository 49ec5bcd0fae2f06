"""Hashes are deterministic, follow the ruling's recipe and change with content."""

import hashlib
import json

import pytest

pytestmark = pytest.mark.anyio


def expected_hash(obj: dict) -> str:
    """The ruling's recipe: canonical JSON (UTF-8 as written, sorted keys, no spaces), SHA-256."""
    rest = {k: v for k, v in obj.items() if k != "hash"}
    return hashlib.sha256(
        json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()


async def test_hash_recipe_and_determinism_across_instances(make_client, tmp_path):
    # A repository URL with non-ASCII text: the recipe must hash the UTF-8, not \u escapes.
    async with make_client(host={"repository": "https://example.org/図書館"}) as (client, _):
        first_manifest = (await client.get("/")).json()
        first_config = (await client.get("/catalog")).json()
    async with make_client(host={"repository": "https://example.org/図書館"}) as (client, _):
        second_manifest = (await client.get("/")).json()
        second_config = (await client.get("/catalog")).json()
    assert first_manifest == second_manifest and first_config == second_config
    assert first_config["hash"] == expected_hash(first_config)
    assert first_manifest["hash"] == expected_hash(first_manifest)
    assert first_manifest["manifest"]["catalog"]["hash"] == first_config["hash"]


async def test_hash_changes_with_configuration(make_client):
    async with make_client() as (client, _):
        plain = (await client.get("/")).json()
    async with make_client(sources={"catalog": {"auth": "basic"}}) as (client, _):
        with_auth = (await client.get("/")).json()
    async with make_client(host={"name": "otherhost"}) as (client, _):
        renamed = (await client.get("/")).json()
    assert plain["manifest"]["catalog"]["hash"] != with_auth["manifest"]["catalog"]["hash"]
    assert plain["hash"] != with_auth["hash"]
    assert renamed["manifest"] == plain["manifest"] and renamed["hash"] != plain["hash"]
