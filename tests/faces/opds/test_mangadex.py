"""A PSE reader walks MangaDex through its fake upstream: pages come from the at-home servers."""

import asyncio
import io
from xml.etree.ElementTree import Element

import pytest
from PIL import Image

from tests.sources.mangadex.fake import FakeMangaDex
from tests.sources.mangadex.image_servers import ImageServers
from toshokan.faces.opds.atom import PSE
from toshokan.testing import ServedHost

from .reader import ACQUISITION, NAVIGATION, NS, STREAM, Reader, entry_titled, href, link

pytestmark = pytest.mark.anyio


async def open_chapter(reader: Reader) -> tuple[str, Element]:
    """The series feed's address and its first chapter entry, as a reader reaches them."""
    root = await reader.feed("/_/opds")
    source = await reader.feed(href(entry_titled(root, "MangaDex"), "subsection", NAVIGATION))
    found = await reader.search(source, "Pirate")
    series_url = href(entry_titled(found, "Pirate Voyage"), "subsection", ACQUISITION)
    series = await reader.feed(series_url)
    chapters = series.findall("a:entry", NS)
    assert len(chapters) == 3
    return series_url, chapters[0]


async def test_walk_to_every_page_converting_webp(
    mangadex_host: ServedHost, image_servers: ImageServers
) -> None:
    reader = Reader(mangadex_host.client)
    series_url, chapter = await open_chapter(reader)
    series = await reader.feed(series_url)
    assert series.findtext("a:author/a:name", namespaces=NS) == "Oda Eiichirou"
    assert "last island" in (series.findtext("a:subtitle", namespaces=NS) or "")
    title = chapter.findtext("a:title", namespaces=NS) or ""
    assert "Straw Hat Scans" in title and "en" in title and "3" in title
    pages = await reader.read_chapter(chapter)
    assert len(pages) == 3
    # The at-home servers answer WebP, which PSE readers cannot show: the host sends JPEG.
    assert all(Image.open(io.BytesIO(page)).format == "JPEG" for page in pages)
    fetched = [r for r in image_servers.requests if "/data" in r.url.path]
    assert len(fetched) == 3
    assert all(r.headers.get("referer") == "https://mangadex.org/" for r in fetched)


async def test_a_chapter_asks_for_its_page_list_once(
    mangadex_host: ServedHost, fake: FakeMangaDex
) -> None:
    """MangaDex allows 40 page lists a minute: reading page by page must not spend one per page."""
    reader = Reader(mangadex_host.client)
    _, chapter = await open_chapter(reader)
    await reader.read_chapter(chapter)
    await reader.read_chapter(chapter, max_width=200)
    assert len(fake.calls(r"^/at-home/server/")) == 1


async def test_concurrent_requests_for_one_page_share_one_fetch(
    mangadex_host: ServedHost, image_servers: ImageServers
) -> None:
    reader = Reader(mangadex_host.client)
    _, chapter = await open_chapter(reader)
    template = href(chapter, STREAM)
    url = template.replace("{pageNumber}", "1").replace("{maxWidth}", "")
    answers = await asyncio.gather(*(reader.get(url) for _ in range(8)))
    assert {a.status_code for a in answers} == {200}
    assert len({a.content for a in answers}) == 1
    assert len([r for r in image_servers.requests if r.url.path.endswith("002.png")]) == 1


async def test_an_upstream_image_failure_is_a_clean_error(
    mangadex_host: ServedHost, image_servers: ImageServers
) -> None:
    reader = Reader(mangadex_host.client)
    _, chapter = await open_chapter(reader)
    template = href(chapter, STREAM)
    image_servers.body = b"this is not an image"
    answer = await reader.get(template.replace("{pageNumber}", "0").replace("{maxWidth}", ""))
    assert answer.status_code == 502
    assert answer.json()["error"]["code"] == "UPSTREAM_ERROR"


async def test_lists_and_series_feeds_spend_no_request_per_entry(
    mangadex_host: ServedHost, fake: FakeMangaDex
) -> None:
    """Details and page lists cost one upstream request each: a list never asks them per entry.

    So a MangaDex title in a list has what the search answered (its details among them), and a
    chapter entry streams with the page count the feed gave; the page list is asked for once,
    when the reader opens the chapter.
    """
    reader = Reader(mangadex_host.client)
    root = await reader.feed("/_/opds")
    source = await reader.feed(href(entry_titled(root, "MangaDex"), "subsection", NAVIGATION))
    everything = await reader.every_entry(href(entry_titled(source, "All titles"), "subsection"))
    assert everything
    assert fake.calls(r"^/manga/[^/]+$") == []  # no title's details
    pirates = next(e for e in everything if e.findtext("a:title", namespaces=NS) == "Pirate Voyage")
    # Described all the same: a MangaDex search answers summary and tags.
    assert pirates.findtext("a:content", namespaces=NS) == "A crew sails for the last island."
    assert [c.get("label") for c in pirates.findall("a:category", NS)] == ["Action"]
    series_url = href(pirates, "subsection", ACQUISITION)
    chapters = (await reader.feed(series_url)).findall("a:entry", NS)
    assert len(chapters) == 3
    assert fake.calls(r"^/at-home/server/") == []  # no chapter's page list
    streams = [link(chapter, STREAM) for chapter in chapters]
    assert [s.get(f"{{{PSE}}}count") if s is not None else None for s in streams] == ["3"] * 3
    assert len(await reader.read_chapter(chapters[0])) == 3
    assert len(fake.calls(r"^/at-home/server/")) == 1


async def test_the_details_a_search_answers_stay_off_the_spec_face(
    mangadex_host: ServedHost,
) -> None:
    """The spec's Entry is slug, title and cover; the details behind it are for other faces."""
    answer = await mangadex_host.client.post("/mangadex/search", json={"page": 1, "sort": "latest"})
    assert answer.status_code == 200
    results = answer.json()["results"]
    assert results and all(set(result) == {"slug", "title", "cover"} for result in results)
    document = (await mangadex_host.client.get("/openapi.json")).json()
    assert set(document["components"]["schemas"]["Entry"]["properties"]) == {
        "slug",
        "title",
        "cover",
    }
    assert "pages" not in document["components"]["schemas"]["Chapter"]["properties"]
    manga = results[0]["slug"]
    chapters = (await mangadex_host.client.get(f"/mangadex/{manga}/chapters")).json()
    assert chapters and all("pages" not in chapter for chapter in chapters)
