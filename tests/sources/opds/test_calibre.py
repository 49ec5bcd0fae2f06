"""A calibre-like catalogue: books without series or streaming, read from their CBZ download."""

import pytest

from tests.sources.opds.fakes import Calibre
from tests.sources.opds.helpers import get_json, pixel, read_all_pages, search, serve_opds

pytestmark = pytest.mark.anyio


async def test_each_book_is_a_series_of_one_read_from_its_download(tmp_path):
    calibre = Calibre()
    async with serve_opds(calibre, tmp_path) as host:
        found = await search(host, query="star")
        assert [r["title"] for r in found["results"]] == ["Star Atlas"]
        slug = found["results"][0]["slug"]
        assert slug.startswith("star-atlas--")
        details = await get_json(host, f"/shelf/{slug}")
        chapters = await get_json(host, f"/shelf/{slug}/chapters")
        first = await read_all_pages(host, slug, chapters[0]["slug"])
        again = await read_all_pages(host, slug, chapters[0]["slug"])
    assert details["authors"] == ["Bo Pen"]
    assert details["tags"] == ["sci-fi", "drama"]
    assert details["synopsis"] == "<p>About Star Atlas.</p>"
    assert details["covers"][0].startswith("http://testserver/_/shelf/img/")
    assert len(chapters) == 1 and chapters[0]["title"] == "Star Atlas"
    assert chapters[0]["date"].startswith("2022-03-01")
    assert [pixel(page)[0] for page in first] == [21, 22, 23, 24]  # natural order in the archive
    assert again == first
    assert calibre.downloads == 1  # kept, not fetched again


async def test_browse_defaults_to_a_list_of_everything_and_sorts_by_facets(tmp_path):
    async with serve_opds(Calibre(), tmp_path) as host:
        config = await get_json(host, "/shelf")
        assert set(config["search"]["sort"]) == {"relevance", "title", "latest"}
        by_title = await search(host, sort="title")
        newest = await search(host, sort="latest")
    assert [r["title"] for r in by_title["results"]] == ["Moon Letters", "Star Atlas", "Sun Diary"]
    assert [r["title"] for r in newest["results"]] == ["Sun Diary", "Star Atlas", "Moon Letters"]


async def test_undeclared_sorts_are_refused_by_the_host(tmp_path):
    async with serve_opds(Calibre(), tmp_path) as host:
        answer = await host.client.post("/shelf/search", json={"page": 1, "sort": "views"})
    assert answer.status_code == 400
