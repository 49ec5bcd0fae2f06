"""The catalogue as third-party clients read it: ``feedparser`` for the Atom feeds, the
official schemas for OPDS 2.0, and the rule Readium's readers (Thorium) sort entries by.

Lists of series are navigation feeds (a series is a feed of chapters, not a book to
acquire), ordered as their facet says, with counts that are true on every page,
past the last one included; an empty OPDS 2.0 page is still a valid feed.
"""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import feedparser
import pytest

from toshokan.testing import ServedHost

from .opds2_schema import assert_feed
from .reader import ACQUISITION, NAVIGATION
from .servers import long_lists

pytestmark = pytest.mark.anyio

REL_ACQUISITION = "http://opds-spec.org/acquisition"
OPDS_JSON = "application/opds+json"


async def parsed(host: ServedHost, url: str, **params: str) -> Any:
    """A feed as ``feedparser`` reads it, with the media type the host answered."""
    answer = await host.client.get(url, params=params)
    assert answer.status_code == 200, (url, answer.text[:300])
    feed = feedparser.parse(answer.content)
    assert not feed.bozo, feed.bozo_exception
    feed["media_type"] = answer.headers["content-type"]
    return feed


def href(item: Any, rel: str) -> str:
    found: str = next(link.href for link in item.links if link.rel == rel)
    return found


def link_type(item: Any, rel: str) -> str:
    found: str = next(link.type for link in item.links if link.rel == rel)
    return found


def readium_reads_as_publication(entry: Any) -> bool:
    """How Readium's OPDS 1 parser (r2-opds-js, in Thorium) sorts an entry: a publication
    when it has an acquisition link, or names authors, or links no Atom feed; otherwise a
    navigation link."""
    if any(link.rel.startswith(REL_ACQUISITION) for link in entry.links):
        return True
    if entry.get("authors"):
        return True
    return not any("application/atom+xml" in (link.get("type") or "") for link in entry.links)


def count(feed: Any) -> int | None:
    total = feed.feed.get("opensearch_totalresults")
    return None if total is None else int(total)


@pytest.fixture
async def shelf_of_23(tmp_path: Path) -> AsyncIterator[ServedHost]:
    """A library of 24 series (two pages of titles), and MangaDex with one title of 60
    chapters."""
    async with long_lists(tmp_path, series=24, chapters=60) as served:
        yield served


async def test_lists_of_series_are_navigation_feeds(
    local_host: ServedHost, mangadex_host: ServedHost
) -> None:
    """Every list of series, and every link to one, says navigation; its entries lead to the
    series' acquisition feed and Readium reads none of them as a book it cannot open."""
    root = await parsed(local_host, "/_/opds")
    assert link_type(root.feed, "search") == "application/opensearchdescription+xml"
    assert NAVIGATION in [link.type for link in root.feed.links if link.rel == "search"]
    source = await parsed(local_host, "/_/opds/local")
    menu = {entry.title: entry for entry in source.entries}
    assert {link_type(entry, "subsection") for entry in menu.values()} == {NAVIGATION}
    description = await local_host.client.get(href(source.feed, "search"))
    assert f'type="{NAVIGATION}"'.encode() in description.content
    lists = [
        (local_host, href(entry, "subsection")) for entry in source.entries
    ]  # all titles and each preset
    lists += [
        (local_host, "/_/opds/local/search?q=iron"),
        (local_host, "/_/opds/_search?q=a"),
        (mangadex_host, "/_/opds/mangadex/search?q=Pirate"),  # answered with authors
    ]
    for host, url in lists:
        feed = await parsed(host, url)
        assert feed.media_type.startswith(NAVIGATION), url
        assert link_type(feed.feed, "self") == NAVIGATION
        facets = [link for link in feed.feed.links if link.rel == "http://opds-spec.org/facet"]
        assert all(facet.type == NAVIGATION for facet in facets)
        assert feed.entries, url
        for entry in feed.entries:
            assert not readium_reads_as_publication(entry), (url, entry.title)
            assert link_type(entry, "subsection") == ACQUISITION
            assert any(link.rel == "http://opds-spec.org/image/thumbnail" for link in entry.links)
    # The feed a series entry leads to is the acquisition feed it says it is.
    series = await parsed(host, href(feed.entries[0], "subsection"))
    assert series.media_type.startswith(ACQUISITION)


async def test_opds2_lists_navigate_to_their_series(local_host: ServedHost) -> None:
    """No publication without an acquisition link: titles are navigation links."""
    for url in ("/_/opds/v2/local/all", "/_/opds/v2/local/presets/0", "/_/opds/v2/local/search"):
        document = (await local_host.client.get(url)).json()
        assert_feed(document)
        assert "publications" not in document
        assert len(document["navigation"]) == 3
        series = (await local_host.client.get(document["navigation"][0]["href"])).json()
        assert_feed(series)
        assert series["publications"]


async def test_the_title_facet_lists_a_to_z(shelf_of_23: ServedHost) -> None:
    for prefix in ("/_/opds", "/_/opds/v2"):
        titles: list[str] = []
        for page in ("1", "2"):
            answer = await shelf_of_23.client.get(
                f"{prefix}/local/all", params={"sort": "title", "page": page}
            )
            if prefix.endswith("v2"):
                titles += [item["title"] for item in answer.json()["navigation"]]
            else:
                titles += [entry.title for entry in feedparser.parse(answer.content).entries]
        assert len(titles) == 24
        assert titles == sorted(titles, key=str.casefold), prefix


async def test_a_page_past_the_end_tells_the_true_count(shelf_of_23: ServedHost) -> None:
    host = shelf_of_23
    last = await parsed(host, "/_/opds/local/all", page="2")
    assert count(last) == 24 == 20 + len(last.entries)
    for page in ("3", "5", "99", "10000"):
        past = await parsed(host, "/_/opds/local/all", page=page)
        assert past.entries == [] and count(past) == 24, page
        document = (await host.client.get("/_/opds/v2/local/all", params={"page": page})).json()
        assert document["metadata"]["numberOfItems"] == 24
    nothing = await parsed(host, "/_/opds/local/search", q="nosuchwordanywhere")
    assert nothing.entries == [] and count(nothing) == 0
    # A remote source's end would cost upstream requests to find: no count, never a guess.
    remote = await parsed(host, "/_/opds/mangadex/all", page="99")
    assert remote.entries == [] and count(remote) is None
    document = (await host.client.get("/_/opds/v2/mangadex/all", params={"page": "99"})).json()
    assert "numberOfItems" not in document["metadata"]


async def test_a_series_feed_counts_every_entry_it_pages_over(shelf_of_23: ServedHost) -> None:
    """60 chapters: 50 a page, every page saying so."""
    host = shelf_of_23
    titles = await parsed(host, "/_/opds/mangadex/all")
    url = href(titles.entries[0], "subsection")
    seen = 0
    for page in ("1", "2"):
        feed = await parsed(host, url, page=page)
        assert count(feed) == 60
        assert int(feed.feed.opensearch_startindex) == seen + 1
        assert int(feed.feed.opensearch_itemsperpage) == 50
        seen += len(feed.entries)
    assert seen == 60
    assert len((await parsed(host, url, page="1")).entries) == 50
    past = await parsed(host, url, page="3")
    assert past.entries == [] and count(past) == 60
    assert (await host.client.get(f"{url.replace('/_/opds/', '/_/opds/v2/')}")).json()["metadata"][
        "numberOfItems"
    ] == 60  # the same count in JSON


async def test_empty_opds2_pages_are_valid_feeds(shelf_of_23: ServedHost) -> None:
    """A search that finds nothing and pages past the end: valid, with a way back."""
    client = shelf_of_23.client
    empty = [
        "/_/opds/v2/local/search?query=nosuchwordanywhere",
        "/_/opds/v2/local/all?page=99",
        "/_/opds/v2/local/presets/0?page=99",
        "/_/opds/v2/mangadex/all?page=99",
    ]
    for source in ("local", "mangadex"):
        series = (await client.get(f"/_/opds/v2/{source}/all")).json()["navigation"][0]["href"]
        empty.append(f"{series}?page=99")
    for url in empty:
        answer = await client.get(url)
        assert answer.status_code == 200 and answer.headers["content-type"] == OPDS_JSON
        document = answer.json()
        assert_feed(document)
        assert not document.get("publications")
        (back,) = document["navigation"]
        assert (await client.get(back["href"])).status_code == 200
