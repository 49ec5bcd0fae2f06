"""One catalogue over several sources: the root lists them all and searches them all at once."""

from xml.etree.ElementTree import Element

import pytest

from toshokan.testing import ServedHost

from .reader import NS, Reader

pytestmark = pytest.mark.anyio


def titles(feed: Element) -> list[str]:
    return [e.findtext("a:title", namespaces=NS) or "" for e in feed.findall("a:entry", NS)]


async def test_the_root_lists_every_serving_source(both_host: ServedHost) -> None:
    root = await Reader(both_host.client).feed("/_/opds")
    # The reader's updates and follows first, then every source.
    assert titles(root) == ["Updates", "Following", "Local Library", "Local Library", "MangaDex"]


async def test_searching_everything_skips_sources_that_want_credentials(
    both_host: ServedHost,
) -> None:
    reader = Reader(both_host.client)
    root = await reader.feed("/_/opds")
    found = await reader.search(root, "Voyage")
    assert "Pirate Voyage" in titles(found)
    contents = [e.findtext("a:content", namespaces=NS) for e in found.findall("a:entry", NS)]
    assert "From MangaDex." in contents
    # The locked library is left out, not a failure of the whole search.
    ids = [e.findtext("a:id", namespaces=NS) or "" for e in found.findall("a:entry", NS)]
    assert not any(":shelf:" in i for i in ids)
    with_credentials = Reader(both_host.client, auth=("reader", "open sesame"))
    everything = await with_credentials.feed("/_/opds/_search?q=")
    ids = [e.findtext("a:id", namespaces=NS) or "" for e in everything.findall("a:entry", NS)]
    assert any(":shelf:" in i for i in ids) and any(":local:" in i for i in ids)
