"""A Komga-like OPDS 1.2 catalogue (HTTP Basic, page streaming, OpenSearch, paged feeds)."""

import pytest

from tests.sources.opds.fakes import Komga
from tests.sources.opds.helpers import get_json, pixel, read_all_pages, search, serve_opds

pytestmark = pytest.mark.anyio

CREDENTIALS = {"username": Komga.user, "password": Komga.password}


async def test_configuration_offers_the_root_shelves_as_presets(tmp_path):
    async with serve_opds(Komga(), tmp_path, **CREDENTIALS) as host:
        config = await get_json(host, "/shelf")
    names = [preset["name"] for preset in config["presets"]]
    assert names == ["Keep Reading", "On Deck", "Latest series", "Latest books", "All libraries"]
    assert config["search"]["filters"] == ["includeTag"]
    assert {tag["slug"] for tag in config["search"]["tags"]} >= {"latest-series", "on-deck"}
    assert config["presets"][2]["request"]["filters"] == {"includeTag": ["latest-series"]}
    assert "relevance" in config["search"]["sort"]
    assert config["url"] == "http://komga.test"
    assert Komga.password not in str(config)


async def test_search_walks_to_the_last_page_image(tmp_path):
    komga = Komga()
    async with serve_opds(komga, tmp_path, **CREDENTIALS) as host:
        found = await search(host, query="harbour")
        assert [r["title"] for r in found["results"]] == ["Blue Harbour"]
        slug = found["results"][0]["slug"]
        details = await get_json(host, f"/shelf/{slug}")
        assert details["title"] == "Blue Harbour"
        assert details["synopsis"] == "A town by the sea."
        assert details["authors"] == ["Aoi Umi"]
        assert {"slice-of-life", "sea"} <= set(details["tags"])
        chapters = await get_json(host, f"/shelf/{slug}/chapters")
        # five books over three upstream pages, newest first, numbered from their titles
        assert [c["number"] for c in chapters] == [5, 4, 3, 2, 1]
        assert chapters[0]["title"] == "Blue Harbour Vol. 5"
        assert chapters[0]["date"].startswith("2024-05-01")
        images = await read_all_pages(host, slug, chapters[0]["slug"])
    assert len(images) == 8
    assert [pixel(image)[0] for image in images] == list(range(8))  # PSE counts from 0
    assert Komga.password not in "".join(str(p) for p in komga.paths)


async def test_pages_are_fetched_with_the_operators_credentials_only(tmp_path):
    komga = Komga()
    async with serve_opds(komga, tmp_path, **CREDENTIALS) as host:
        slug = (await search(host, query="red"))["results"][0]["slug"]
        chapters = await get_json(host, f"/shelf/{slug}/chapters")
        assert chapters[0]["number"] == 1.5
        urls = await get_json(host, f"/shelf/{slug}/chapters/{chapters[0]['slug']}")
    assert all(Komga.password not in url and "komga.test" not in url for url in urls)
    assert all(auth and auth.startswith("Basic ") for auth in komga.authorizations)


async def test_browse_reads_upstream_pages_lazily(tmp_path):
    komga = Komga()
    async with serve_opds(komga, tmp_path, feed_cache_seconds=0, **CREDENTIALS) as host:
        await get_json(host, "/shelf")
        before = komga.hits
        first = await search(host, limit=1)
        assert [r["title"] for r in first["results"]] == ["Blue Harbour"]
        assert first["more"] is True
        # one entry and the one after it fit in the first upstream page of two
        assert komga.hits - before == 1
        before = komga.hits
        last = await search(host, page=3, limit=1)
        assert [r["title"] for r in last["results"]] == ["Green Field"]
        assert last["more"] is False
        assert komga.hits - before == 2


async def test_presets_browse_their_shelf(tmp_path):
    async with serve_opds(Komga(), tmp_path, **CREDENTIALS) as host:
        config = await get_json(host, "/shelf")
        preset = next(p for p in config["presets"] if p["name"] == "Latest series")
        found = await search(host, **preset["request"])
    assert [r["title"] for r in found["results"]] == ["Blue Harbour", "Red Mountain", "Green Field"]
    assert all(r["cover"] is None for r in found["results"])


async def test_wrong_credentials_name_the_misconfiguration(tmp_path):
    async with serve_opds(
        Komga(), tmp_path, username="reader@komga.test", password="wrong"
    ) as host:
        answer = await host.client.post("/shelf/search", json={"page": 1, "sort": "relevance"})
        ping = await get_json(host, "/shelf/ping")
    assert answer.status_code == 502
    assert answer.json()["error"]["code"] == "UPSTREAM_ERROR"
    assert "credentials configured for source 'shelf'" in answer.json()["error"]["message"]
    assert "wrong" not in answer.text
    assert ping["status"] == "down"


async def test_ping_reaches_the_root(tmp_path):
    komga = Komga()
    async with serve_opds(komga, tmp_path, **CREDENTIALS) as host:
        ping = await get_json(host, "/shelf/ping")
    assert ping["status"] == "ok"
    assert komga.paths[-1] == "/opds/v1.2/catalog"


async def test_upstream_failures_map_to_the_spec_codes(tmp_path):
    komga = Komga()
    async with serve_opds(komga, tmp_path, **CREDENTIALS) as host:
        slug = (await search(host, query="red"))["results"][0]["slug"]
        komga.series = [s for s in komga.series if s.title != "Red Mountain"]
        host.source("shelf").catalogue._pages.clear()
        gone = await host.client.get(f"/shelf/{slug}/chapters")
        komga.fail_with = 500
        broken = await host.client.post(
            "/shelf/search", json={"page": 1, "sort": "relevance", "query": "zzz"}
        )
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "MANGA_NOT_FOUND"
    assert broken.status_code == 502 and broken.json()["error"]["code"] == "UPSTREAM_ERROR"


async def test_slugs_that_are_not_ours_are_not_found(tmp_path):
    async with serve_opds(Komga(), tmp_path, **CREDENTIALS) as host:
        slug = (await search(host, query="red"))["results"][0]["slug"]
        chapters = await get_json(host, f"/shelf/{slug}/chapters")
        urls = await get_json(host, f"/shelf/{slug}/chapters/{chapters[0]['slug']}")
        forged = urls[0].rsplit("/", 1)[0] + "/" + "0" * 24
        answers = [
            await host.client.get("/shelf/no-such-thing"),
            await host.client.get("/shelf/title--mfrggzdf"),  # decodes, but not to a path
            await host.client.get(f"/shelf/{slug}/chapters/nope"),
            await host.client.get(forged),
        ]
    assert [a.status_code for a in answers] == [404, 404, 404, 404]
    assert [a.json()["error"]["code"] for a in answers[:3]] == [
        "MANGA_NOT_FOUND",
        "MANGA_NOT_FOUND",
        "CHAPTER_NOT_FOUND",
    ]


async def test_a_slow_catalogue_is_an_upstream_timeout_within_one_deadline(tmp_path):
    komga = Komga()
    async with serve_opds(komga, tmp_path, answer_seconds=0.5, **CREDENTIALS) as host:
        komga.delay = 0.3  # each page in time, a five-book series of three pages not
        slug = (await search(host, query="harbour"))["results"][0]["slug"]
        answer = await host.client.get(f"/shelf/{slug}/chapters")
    assert answer.status_code == 504
    assert answer.json()["error"]["code"] == "UPSTREAM_TIMEOUT"


async def test_a_catalogue_down_at_start_is_read_once_it_answers(tmp_path):
    komga = Komga()
    komga.fail_with = 503
    async with serve_opds(komga, tmp_path, **CREDENTIALS) as host:
        assert (await get_json(host, "/shelf"))["presets"] == []
        down = await host.client.post("/shelf/search", json={"page": 1, "sort": "relevance"})
        komga.fail_with = None
        found = await search(host, query="red")
        config = await get_json(host, "/shelf")
    assert len(config["presets"]) == 5
    assert down.status_code == 502
    assert [r["title"] for r in found["results"]] == ["Red Mountain"]
