"""The OPDS 2.0 catalogue: the same walk in JSON, down to a DiViNa manifest's last page.

The official OPDS 2.0 JSON Schemas are not shipped by any package on PyPI or
npm, so :func:`check_feed` and :func:`check_manifest` encode what they require
(feed.schema.json, publication.schema.json, the Readium link and manifest
schemas): required members, link objects, acquisition links, templated search.
"""

from typing import Any

import httpx
import pytest

from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio

OPDS_JSON = "application/opds+json"
ACQUISITIONS = {
    "preview",
    "http://opds-spec.org/acquisition",
    "http://opds-spec.org/acquisition/buy",
    "http://opds-spec.org/acquisition/open-access",
    "http://opds-spec.org/acquisition/borrow",
    "http://opds-spec.org/acquisition/subscribe",
    "http://opds-spec.org/acquisition/sample",
}


def check_link(link: dict[str, Any]) -> None:
    assert isinstance(link.get("href"), str) and link["href"]
    assert isinstance(link.get("type", ""), str)
    if link.get("templated"):
        assert "{" in link["href"]
    else:
        assert "{" not in link["href"]
    assert set(link) <= {
        "href",
        "type",
        "rel",
        "title",
        "templated",
        "width",
        "height",
        "properties",
    }


def check_feed(feed: dict[str, Any]) -> None:
    assert isinstance(feed["metadata"]["title"], str)
    assert feed["links"] and any(link.get("rel") == "self" for link in feed["links"])
    assert {"navigation", "publications", "groups"} & set(feed)
    for link in feed["links"]:
        check_link(link)
    for item in feed.get("navigation", []):
        check_link(item)
        assert item["title"]
    for publication in feed.get("publications", []):
        assert isinstance(publication["metadata"]["title"], str)
        assert any(link.get("rel") in ACQUISITIONS for link in publication["links"])
        for link in [*publication["links"], *publication.get("images", [])]:
            check_link(link)
    for facet in feed.get("facets", []):
        assert facet["metadata"]["title"] and facet["links"]


def check_manifest(manifest: dict[str, Any]) -> None:
    assert manifest["metadata"]["title"]
    assert (
        manifest["metadata"]["conformsTo"] == "https://readium.org/webpub-manifest/profiles/divina"
    )
    assert any(link.get("rel") == "self" for link in manifest["links"])
    for link in [*manifest["links"], *manifest["readingOrder"]]:
        check_link(link)
        assert link["type"]


async def get_json(client: httpx.AsyncClient, url: str, media: str = OPDS_JSON, **kw: Any) -> Any:
    answer = await client.get(url, **kw)
    assert answer.status_code == 200, (url, answer.text[:300])
    assert answer.headers["content-type"].startswith(media)
    return answer.json()


def rel(feed: dict[str, Any], name: str) -> str:
    return next(link["href"] for link in feed["links"] if link.get("rel") == name)


async def walk(client: httpx.AsyncClient, source_name: str, **kw: Any) -> list[bytes]:
    root = await get_json(client, "/_/opds/v2", **kw)
    check_feed(root)
    source_url = next(n["href"] for n in root["navigation"] if n["title"] == source_name)
    source = await get_json(client, source_url, **kw)
    check_feed(source)
    url = next(n["href"] for n in source["navigation"] if n["title"] == "All titles")
    titles: list[dict[str, Any]] = []
    while url:
        page = await get_json(client, url, **kw)
        check_feed(page)
        titles += page["publications"]
        url = next((link["href"] for link in page["links"] if link.get("rel") == "next"), "")
    assert titles
    series_url = next(
        link["href"] for link in titles[0]["links"] if link.get("rel") == "subsection"
    )
    series = await get_json(client, series_url, **kw)
    check_feed(series)
    chapter = series["publications"][0]
    manifest_url = chapter["links"][0]["href"]
    manifest = await get_json(client, manifest_url, "application/divina+json", **kw)
    check_manifest(manifest)
    pages = []
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


async def test_opds2_search_is_a_templated_link(local_host: ServedHost) -> None:
    client = local_host.client
    source = await get_json(client, "/_/opds/v2/local")
    search = next(link for link in source["links"] if link.get("rel") == "search")
    assert search["templated"] and search["href"].endswith("{?query}")
    found = await get_json(client, search["href"].replace("{?query}", "?query=a"))
    check_feed(found)
    every = await get_json(client, search["href"].replace("{?query}", ""))
    assert every["publications"]


async def test_opds2_locked_library_wants_basic(locked_host: ServedHost) -> None:
    client = locked_host.client
    answer = await client.get("/_/opds/v2/shelf")
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith("Basic")
    pages = await walk(client, "Local Library", auth=("reader", "open sesame"))
    assert len(pages) == 3
