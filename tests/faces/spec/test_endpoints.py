"""Every endpoint of the spec answers with its schema, field for field."""

import pytest

from toshokan.models import Chapter, HostManifest, Manga, Ping, SearchResponse, SourceConfiguration

pytestmark = pytest.mark.anyio


async def test_manifest_lists_sources_with_versions_and_hashes(make_client):
    async with make_client(sources={"catalog": {}, "other": {"status": "deprecated"}}) as (
        client,
        _,
    ):
        response = await client.get("/")
    assert response.status_code == 200
    manifest = HostManifest.model_validate(response.json())
    assert manifest.name == "toshokan"
    assert manifest.sources == ["catalog", "other"]
    assert manifest.manifest["catalog"].version == "1.2.3"
    assert manifest.manifest["other"].status == "deprecated"
    assert len(manifest.hash) == 64 and manifest.hash == manifest.hash.lower()


async def test_source_configuration_has_every_field(make_client):
    async with make_client() as (client, _):
        body = (await client.get("/catalog")).json()
    config = SourceConfiguration.model_validate(body)
    assert body["referer"] == "" and body["nsfw"] is False  # spec defaults applied by the models
    assert body["auth"] == {"type": "none", "required": False}  # no `fields` for type none
    assert config.version == "1.2.3" and len(config.hash) == 64
    assert body["updatedAt"] == "2024-01-01T00:00:00Z"
    assert body["presets"][0]["request"]["sort"] == "title"


async def test_health_and_ping(make_client):
    async with make_client() as (client, hosted_sources):
        assert (await client.get("/catalog/health")).json() == {"status": "ok"}
        ping = Ping.model_validate((await client.get("/catalog/ping")).json())
        assert ping.status == "ok" and ping.latencyMs >= 0 and ping.error is None
        source = hosted_sources.by_slug["catalog"].source
        source.ping_error = ConnectionError("refused")
        down = (await client.get("/catalog/ping")).json()
    assert down["status"] == "down" and "error" in down and down["latencyMs"] >= 0


async def test_search_pages_and_more(make_client):
    async with make_client() as (client, _):
        first = await client.post("/catalog/search", json={"page": 1, "sort": "title", "limit": 20})
        last = await client.post("/catalog/search", json={"page": 3, "sort": "title", "limit": 20})
        past = await client.post("/catalog/search", json={"page": 9, "sort": "title"})
    one = SearchResponse.model_validate(first.json())
    assert one.page == 1 and len(one.results) == 20 and one.more is True
    assert set(first.json()["results"][0]) == {"slug", "title", "cover"}
    three = SearchResponse.model_validate(last.json())
    assert len(three.results) == 5 and three.more is False
    assert past.json() == {"results": [], "page": 9, "more": False}


async def test_search_defaults(make_client):
    async with make_client() as (client, _):
        body = (
            await client.post("/catalog/search", json={"page": 1, "sort": "relevance", "query": ""})
        ).json()
    assert len(body["results"]) == 20  # limit defaults to 20
    assert body["results"][0]["title"] == "Title 044"  # direction defaults to desc


async def test_details_chapters_pages(make_client):
    async with make_client() as (client, _):
        manga = Manga.model_validate((await client.get("/catalog/title-001")).json())
        chapters = [
            Chapter.model_validate(c)
            for c in (await client.get("/catalog/title-001/chapters")).json()
        ]
        pages = await client.get("/catalog/title-001/chapters/c2")
    assert manga.title == "Title 001" and manga.synopsis == "No Description."
    assert [c.number for c in chapters] == [5, 5, 4, 3, 2, 1]  # newest first
    assert {c.scanlator for c in chapters if c.number == 5} == {"Unknown Scanlator", "Other"}
    assert pages.json() == [f"https://img.catalog.example/title-001/c2/{i}.png" for i in (1, 2, 3)]
    assert pages.headers["cache-control"] == "no-store"


async def test_chapter_numbers_are_plain_json_numbers(make_client):
    async with make_client() as (client, _):
        raw = (await client.get("/catalog/title-001/chapters")).text
    assert '"number":5,' in raw and '"number":5.0' not in raw


async def test_openapi_and_offline_docs(make_client):
    async with make_client() as (client, _):
        openapi = (await client.get("/openapi.json")).json()
        docs = await client.get("/_/docs")
        asset = await client.get("/_/docs/assets/swagger-ui-bundle.js")
    assert "/{source}/search" in openapi["paths"]
    assert "SearchRequest" in openapi["components"]["schemas"]
    assert docs.status_code == 200 and "/_/docs/assets/swagger-ui-bundle.js" in docs.text
    assert "cdn" not in docs.text.lower()
    assert asset.status_code == 200 and len(asset.content) > 100_000
