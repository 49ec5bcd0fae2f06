"""KOReader browsing the catalogue (:mod:`.koreader`): a ``HEAD`` before every feed, its cache
kept by ``Last-Modified``, all within the host's default rate limit."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from defusedxml import ElementTree

from tests.helpers.calls import count_calls
from tests.helpers.libraries import DemoLibrary
from toshokan.testing import ServedHost, serve_host

from . import koreader
from .reader import NAVIGATION, NS, entry_titled, href
from .servers import SECRET, local

pytestmark = pytest.mark.anyio

#: Feeds visited in a pass: a list and the series in it, one after another, going back to
#: the list each time, as a reader looking for something to read does.
VISITS = 100


@pytest.fixture
async def default_limits_host(
    demo_library: DemoLibrary, tmp_path: Path
) -> AsyncIterator[ServedHost]:
    """Twelve series, on a host with the default rate limit (100 requests a minute)."""
    root = demo_library(series=12, chapters=2, pages=2)
    async with serve_host(
        {"local": local(root)}, data_dir=tmp_path / "data", host={"secret": SECRET}
    ) as served:
        yield served


def links_of(feed: bytes, rel: str) -> list[str]:
    root = ElementTree.fromstring(feed)
    return [href(entry, rel) for entry in root.findall("a:entry", NS)]


async def walk(browser: koreader.KOReaderOpds) -> None:
    """Root, the library, its titles, then each series and back to the titles, until
    :data:`VISITS` feeds were opened."""
    visits = 0

    async def opened(url: str) -> bytes:
        nonlocal visits
        visits += 1
        feed = await browser.parse_feed(url)
        assert feed is not None, browser.messages
        return feed

    root = await opened("/_/opds")
    library = await opened(
        href(entry_titled(ElementTree.fromstring(root), "Local Library"), "subsection", NAVIGATION)
    )
    titles_url = href(entry_titled(ElementTree.fromstring(library), "All titles"), "subsection")
    titles = await opened(titles_url)
    series = links_of(titles, "subsection")
    assert len(series) == 12
    for number in range(VISITS):
        if visits >= VISITS:
            break
        await opened(series[number % len(series)])
        await opened(titles_url)  # back


async def test_a_walk_of_100_feeds_twice_stays_within_the_default_budget(
    default_limits_host: ServedHost,
) -> None:
    browser = koreader.KOReaderOpds(default_limits_host.client)
    await walk(browser)
    first = list(browser.requests)
    assert browser.messages == []
    assert {status for _, _, status in first} == {200}
    heads = [r for r in first if r[0] == "HEAD"]
    gets = [r for r in first if r[0] == "GET"]
    assert len(heads) >= VISITS
    assert len(gets) == 15  # root, library, titles and twelve series: each fetched once
    browser.requests.clear()
    await walk(browser)
    assert browser.messages == []
    assert {method for method, _, _ in browser.requests} == {"HEAD"}  # every feed from its cache
    assert {status for _, _, status in browser.requests} == {200}


async def test_a_head_is_answered_without_building_the_feed(
    default_limits_host: ServedHost,
) -> None:
    client = default_limits_host.client
    titles = ElementTree.fromstring((await client.get("/_/opds/local/all")).content)
    url = links_of(ElementTree.tostring(titles), "subsection")[0]
    full = await client.get(url)
    assert full.headers["last-modified"] and full.headers["etag"].startswith('W/"')
    with count_calls() as calls:
        head = await client.head(url)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["last-modified"] == full.headers["last-modified"]
    assert head.headers["etag"] == full.headers["etag"]
    assert head.headers["content-length"] == str(len(full.content))
    assert head.headers["content-type"] == full.headers["content-type"]
    assert not [name for name in calls.by_function if name.startswith("faces/opds/series.py")]
    # A client that kept the feed is told so, by either validator, also without building it.
    with count_calls() as calls:
        for validator in (
            {"If-None-Match": full.headers["etag"]},
            {"If-Modified-Since": full.headers["last-modified"]},
        ):
            assert (await client.get(url, headers=validator)).status_code == 304
    assert not [name for name in calls.by_function if name.startswith("faces/opds/series.py")]


async def test_a_page_read_changes_the_feed_that_shows_it(
    default_limits_host: ServedHost,
) -> None:
    """``pse:lastRead`` is in the series feed: reading a page gives it a new version."""
    client = default_limits_host.client
    titles = (await client.get("/_/opds/local/all")).content
    url = links_of(titles, "subsection")[0]
    before = await client.get(url)
    feed = ElementTree.fromstring(before.content)
    stream = href(feed.findall("a:entry", NS)[0], "http://vaemendis.net/opds-pse/stream")
    page = stream.replace("{pageNumber}", "1").replace("{maxWidth}", "")
    assert (await client.get(page)).status_code == 200
    after = await client.get(url, headers={"If-None-Match": before.headers["etag"]})
    assert after.status_code == 200
    assert b'lastRead="2"' in after.content
    assert after.headers["etag"] != before.headers["etag"]


async def test_koreader_searches_from_the_opds2_root(default_limits_host: ServedHost) -> None:
    client = default_limits_host.client
    root = (await client.get("/_/opds/v2")).json()
    link = next(k for k in root["links"] if k.get("rel") == "search")
    found = (await client.get(koreader.search_url(link, "iron"))).json()
    titles = [n["title"] for group in found["groups"] for n in group["navigation"]]
    assert "Iron Garden" in titles
