"""An OPDS 2.0 JSON catalogue: navigation, publication groups, URI-template search."""

import pytest

from tests.sources.opds.fakes import KomgaV2
from tests.sources.opds.helpers import get_json, pixel, read_all_pages, search, serve_opds

pytestmark = pytest.mark.anyio


async def test_search_details_chapters_and_the_last_page(tmp_path):
    fake = KomgaV2()
    async with serve_opds(fake, tmp_path) as host:
        config = await get_json(host, "/shelf")
        found = await search(host, query="blue harbour")
        slug = found["results"][0]["slug"]
        details = await get_json(host, f"/shelf/{slug}")
        chapters = await get_json(host, f"/shelf/{slug}/chapters")
        pages = await read_all_pages(host, slug, chapters[0]["slug"])
    assert [p["name"] for p in config["presets"]] == ["Series", "Libraries"]
    assert "/opds/v2/series?query=blue%20harbour" in fake.paths
    assert details["title"] == "Blue Harbour"
    assert details["authors"] == ["Aoi Umi"]
    assert [c["number"] for c in chapters] == [5, 4, 3, 2, 1]  # from belongsTo positions
    assert chapters[0]["language"] == "ja"
    assert len(pages) == 8 and pixel(pages[-1])[0] == 8


async def test_webp_covers_pass_through_the_host(tmp_path):
    async with serve_opds(KomgaV2(), tmp_path) as host:
        slug = (await search(host, query="red"))["results"][0]["slug"]
        details = await get_json(host, f"/shelf/{slug}")
        cover = await host.client.get(details["covers"][0])
    assert cover.status_code == 200
    assert cover.headers["content-type"] == "image/webp"


async def test_genre_and_status_facets_become_filters(tmp_path):
    async with serve_opds(KomgaV2(), tmp_path) as host:
        config = await get_json(host, "/shelf")
        genre = await search(host, filters={"includeTag": ["slice-of-life"]})
        completed = await search(host, filters={"status": ["Completed"]})
        both = await host.client.post(
            "/shelf/search",
            json={
                "page": 1,
                "sort": "relevance",
                "filters": {"includeTag": ["slice-of-life"], "status": ["Ongoing"]},
            },
        )
        unknown = await host.client.post(
            "/shelf/search",
            json={"page": 1, "sort": "relevance", "filters": {"status": ["Hiatus"]}},
        )
    assert config["search"]["filters"] == ["includeTag", "status"]
    assert {"slug": "slice-of-life", "name": "Slice of Life", "nsfw": False} in config["search"][
        "tags"
    ]
    assert [r["title"] for r in genre["results"]] == ["Blue Harbour"]
    assert [r["title"] for r in completed["results"]] == ["Red Mountain", "Green Field"]
    assert both.status_code == 400 and unknown.status_code == 400
