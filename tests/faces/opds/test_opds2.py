"""The OPDS 2.0 catalogue: the same walk in JSON, down to a DiViNa manifest's last page.

Every document a reader meets on the way (root, a source's navigation, preset,
search and all-titles feeds with their facets and every page of them, the
series' chapters with every page of them, chapter manifests) is checked
against the official OPDS 2.0 and Readium JSON Schemas (``opds2_schema``).
"""

import copy
from pathlib import Path
from typing import Any

import httpx
import pytest

from toshokan.testing import ServedHost

from .opds2_schema import FEED, MANIFEST, PUBLICATION, assert_feed, assert_manifest, errors
from .servers import long_lists

pytestmark = pytest.mark.anyio

OPDS_JSON = "application/opds+json"
DIVINA = "application/divina+json"


async def get_json(client: httpx.AsyncClient, url: str, media: str = OPDS_JSON, **kw: Any) -> Any:
    answer = await client.get(url, **kw)
    assert answer.status_code == 200, (url, answer.text[:300])
    assert answer.headers["content-type"].startswith(media)
    return answer.json()


def rel(document: dict[str, Any], name: str) -> str | None:
    return next((k["href"] for k in document["links"] if k.get("rel") == name), None)


async def every_page(client: httpx.AsyncClient, url: str, **kw: Any) -> list[dict[str, Any]]:
    """A paginated feed followed by its ``next`` links, each page checked against the schema."""
    pages: list[dict[str, Any]] = []
    following: str | None = url
    while following:
        page = await get_json(client, following, **kw)
        assert_feed(page)
        pages.append(page)
        following = rel(page, "next")
        assert len(pages) < 20, "the list never ends"
    return pages


async def walk(client: httpx.AsyncClient, source_name: str, **kw: Any) -> list[bytes]:
    """Root, source, every list it offers, a series, its chapters and one chapter's pages."""
    root = await get_json(client, "/_/opds/v2", **kw)
    assert_feed(root)
    source_url = next(n["href"] for n in root["navigation"] if n["title"] == source_name)
    source = await get_json(client, source_url, **kw)
    assert_feed(source)
    titles: list[dict[str, Any]] = []
    for item in source["navigation"]:  # all titles and every preset
        feeds = await every_page(client, item["href"], **kw)
        for facet in feeds[0].get("facets", []):
            for option in facet["links"]:
                await every_page(client, option["href"], **kw)
        if item["title"] == "All titles":
            titles = [n for feed in feeds for n in feed["navigation"]]
    search = next(link for link in source["links"] if link.get("rel") == "search")
    await every_page(client, search["href"].replace("{?query}", "?query=a"), **kw)
    assert titles
    chapters = [
        p
        for page in await every_page(client, titles[0]["href"], **kw)
        for p in page["publications"]
    ]
    pages: list[bytes] = []
    for number, chapter in enumerate(chapters[:3]):
        manifest_url = next(link["href"] for link in chapter["links"] if link["type"] == DIVINA)
        manifest = await get_json(client, manifest_url, DIVINA, **kw)
        assert_manifest(manifest)
        if number == 0:
            for item in manifest["readingOrder"]:
                answer = await client.get(item["href"], **kw)
                assert answer.status_code == 200
                assert answer.headers["content-type"] in ("image/jpeg", "image/png", "image/gif")
                pages.append(answer.content)
    return pages


async def test_local_library_in_opds2(local_host: ServedHost) -> None:
    assert len(await walk(local_host.client, "Local Library")) == 3


async def test_mangadex_in_opds2(mangadex_host: ServedHost) -> None:
    pages = await walk(mangadex_host.client, "MangaDex")
    assert len(pages) == 3


async def test_long_lists_paginate_and_every_page_validates(tmp_path: Path) -> None:
    """More titles than a page holds (local) and more chapters than a page holds (MangaDex)."""
    async with long_lists(tmp_path, series=23, chapters=53) as host:
        titles = await every_page(host.client, "/_/opds/v2/local/all")
        assert len(titles) == 2
        assert sum(len(page["navigation"]) for page in titles) == 23
        assert titles[-1]["metadata"]["numberOfItems"] == 23
        dex = await every_page(host.client, "/_/opds/v2/mangadex/all")
        chapters = await every_page(host.client, dex[0]["navigation"][0]["href"])
        assert len(chapters) == 2
        assert sum(len(page["publications"]) for page in chapters) == 53


async def test_the_schemas_reject_a_broken_feed(local_host: ServedHost) -> None:
    """The check can fail: each change below breaks a rule of the official schemas."""
    client = local_host.client
    feed = await get_json(client, "/_/opds/v2/local/all")
    assert not errors(feed, FEED)

    def broken(change: Any) -> dict[str, Any]:
        copied = copy.deepcopy(feed)
        change(copied)
        return copied

    no_self = broken(lambda f: f.update(links=[k for k in f["links"] if k.get("rel") != "self"]))
    assert errors(no_self, FEED)
    untitled = broken(lambda f: f["metadata"].pop("title"))
    assert errors(untitled, FEED)
    bad_page = broken(lambda f: f["metadata"].update(currentPage=0))
    assert errors(bad_page, FEED)
    emptied = broken(lambda f: f.update(navigation=[]))
    assert errors(emptied, FEED)
    chapter = (await get_json(client, feed["navigation"][0]["href"]))["publications"][0]
    assert not errors(chapter, PUBLICATION)
    unreachable = copy.deepcopy(chapter)
    unreachable["links"] = [k for k in unreachable["links"] if k.get("rel") == "subsection"]
    assert errors(unreachable, PUBLICATION)  # no acquisition link
    bad_language = copy.deepcopy(chapter)
    bad_language["metadata"]["language"] = "not a language tag"
    assert errors(bad_language, PUBLICATION)
    manifest_url = next(link["href"] for link in chapter["links"] if link["type"] == DIVINA)
    manifest = await get_json(client, manifest_url, DIVINA)
    assert not errors(manifest, MANIFEST)
    manifest["readingOrder"][0].pop("type")
    assert errors(manifest, MANIFEST)


async def test_opds2_search_is_a_templated_link(local_host: ServedHost) -> None:
    client = local_host.client
    source = await get_json(client, "/_/opds/v2/local")
    search = next(link for link in source["links"] if link.get("rel") == "search")
    assert search["templated"] and search["href"].endswith("{?query}")
    found = await get_json(client, search["href"].replace("{?query}", "?query=a"))
    assert_feed(found)
    every = await get_json(client, search["href"].replace("{?query}", ""))
    assert every["navigation"]


async def test_opds2_locked_library_wants_basic(locked_host: ServedHost) -> None:
    client = locked_host.client
    answer = await client.get("/_/opds/v2/shelf")
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith("Basic")
    pages = await walk(client, "Local Library", auth=("reader", "open sesame"))
    assert len(pages) == 3
