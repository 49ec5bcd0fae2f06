"""Codex's deviations are read leniently, each with one warning in the log."""

import logging

import pytest

from tests.sources.opds.fakes import Codex
from tests.sources.opds.helpers import get_json, pixel, read_all_pages, search, serve_opds

pytestmark = pytest.mark.anyio


async def test_codex_is_read_despite_its_deviations(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="toshokan.sources.opds")
    codex = Codex()
    async with serve_opds(codex, tmp_path) as host:
        found = await search(host, query="mountain")
        slug = found["results"][0]["slug"]
        chapters = await get_json(host, f"/shelf/{slug}/chapters")
        pages = await read_all_pages(host, slug, chapters[0]["slug"])
        await search(host, query="field")
    assert [r["title"] for r in found["results"]] == ["Red Mountain"]  # no "Order By" entries
    assert len(pages) == 2 and pixel(pages[1])[0] == 1
    assert "/opds/v1.2/s/0/1?q=mountain&topGroup=s" in codex.paths
    warnings = [r.getMessage() for r in caplog.records]
    for deviation in ("406", "application/xml", "no Atom namespace", "bare '&'", "as feed entries"):
        assert sum(deviation in w for w in warnings) == 1, (deviation, warnings)


async def test_codex_sort_entries_become_sorts(tmp_path):
    async with serve_opds(Codex(), tmp_path) as host:
        config = await get_json(host, "/shelf")
        by_title = await search(host, sort="title")
    assert config["search"]["sort"] == ["relevance", "title"]
    assert [r["title"] for r in by_title["results"]] == [
        "Blue Harbour",
        "Red Mountain",
        "Green Field",
    ]
