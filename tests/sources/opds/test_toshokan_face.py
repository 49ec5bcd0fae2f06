"""A toshokan reading another toshokan: the OPDS face of one host is a source of the other."""

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

import httpx
import pytest
from asgi_lifespan import LifespanManager

from tests.faces.opds.reader import NS, STREAM, Reader, entry_titled, href, link
from tests.sources.opds.helpers import get_json, read_all_pages, search, serve_opds
from toshokan.core import Core
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library
from toshokan.testing import build_app

pytestmark = pytest.mark.anyio


class Upstream:
    """The other toshokan, serving a demo library of three series at ``http://other.test``."""

    root = "http://other.test/_/opds"

    def __init__(self, app: Any, library: Path, core: Core) -> None:
        self._app = app
        self.library = library
        self.core = core

    async def rescan(self) -> None:
        library = self.core.source("local").source
        assert isinstance(library, LocalLibrary)
        await library.rescan()

    def app(self) -> Any:
        return self._app


@pytest.fixture
async def other(tmp_path: Path) -> AsyncIterator[Upstream]:
    library = tmp_path / "library"
    write_demo_library(library, series=3, chapters=2, pages=3)
    spec = (LocalLibrary, LocalSettings(root=library, watch=False))
    app = build_app(
        {"local": spec}, data_dir=tmp_path / "other", host={"public_url": "http://other.test"}
    )
    async with LifespanManager(app) as manager:
        yield Upstream(manager.app, library, app.state.core)


async def other_chapters(other: Upstream, title: str) -> list[dict[str, Any]]:
    """The chapters the other host itself lists for the series called ``title``."""
    transport = httpx.ASGITransport(app=other.app())
    async with httpx.AsyncClient(transport=transport, base_url="http://other.test") as client:
        found = await client.post("/local/search", json={"page": 1, "sort": "title", "limit": 100})
        slug = next(r["slug"] for r in found.json()["results"] if r["title"] == title)
        listed: list[dict[str, Any]] = (await client.get(f"/local/{slug}/chapters")).json()
        return listed


async def test_another_toshokan_is_read_to_the_last_page(other: Upstream, tmp_path: Path):
    async with serve_opds(other, tmp_path / "here") as host:
        config = await get_json(host, "/shelf")
        browsed = await search(host)
        found = await search(host, query="iron")
        slug = next(r["slug"] for r in browsed["results"] if r["title"] == "Half Moon Diaries")
        details = await get_json(host, f"/shelf/{slug}")
        chapters = await get_json(host, f"/shelf/{slug}/chapters")
        pages = await read_all_pages(host, slug, chapters[0]["slug"])
        cover = await host.client.get(browsed["results"][0]["cover"])
    own = await other_chapters(other, "Half Moon Diaries")
    # the other host's root lists its reader's follows, then its sources; browsing goes down
    # to "All titles"
    assert [p["name"] for p in config["presets"]] == ["Updates", "Following", "Local Library"]
    assert {r["title"] for r in browsed["results"]} == {
        "Half Moon Diaries",
        "Iron Garden",
        "Hoshi no Tabibito",
    }
    assert [r["title"] for r in found["results"]] == ["Iron Garden"]
    assert details["title"] == "Half Moon Diaries"
    # each chapter of the face is a feed of its own, holding the streamed book
    assert [c["number"] for c in chapters] == [1.5, 1]
    assert chapters[0]["date"][:16] == own[0]["date"][:16]  # the feed's dates, to the minute
    assert len(pages) == 3
    assert cover.status_code == 200 and cover.headers["content-type"].startswith("image/")


async def test_a_title_keeps_its_description_from_one_catalogue_to_the_next(
    other: Upstream, tmp_path: Path
) -> None:
    """The other host's list describes each title; this host's list passes that on."""
    (other.library / "Half Moon Diaries" / "series.json").write_text(
        json.dumps({"metadata": {"description_text": "Letters under a half moon."}})
    )
    await other.rescan()
    async with serve_opds(other, tmp_path / "here") as host:
        reader = Reader(host.client)
        root = await reader.feed("/_/opds")
        shelf = await reader.feed(href(entry_titled(root, "Shelf"), "subsection"))
        listed = await reader.every_entry(href(entry_titled(shelf, "All titles"), "subsection"))
        diaries = entry_titled_in(listed, "Half Moon Diaries")
        slug = next(
            r["slug"] for r in (await search(host))["results"] if r["title"] == "Half Moon Diaries"
        )
        details = await get_json(host, f"/shelf/{slug}")
        assert details["synopsis"] == "Letters under a half moon."
        assert diaries.findtext("a:content", namespaces=NS) == details["synopsis"]
        assert [a.text for a in diaries.findall("a:author/a:name", NS)] == details["authors"]
        # Its chapters have no page count yet: each leads to its own feed, which streams it.
        series = await reader.feed(href(diaries, "subsection"))
        chapter = series.findall("a:entry", NS)[0]
        assert link(chapter, STREAM) is None
        assert len(await reader.read_chapter(chapter)) == 3


def entry_titled_in(entries: list[Element], title: str) -> Element:
    return next(e for e in entries if e.findtext("a:title", namespaces=NS) == title)
