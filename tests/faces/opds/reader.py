"""An OPDS reader's side of the catalogue: fetch feeds, check them, follow their links."""

from dataclasses import dataclass, field
from typing import Any
from xml.etree.ElementTree import Element

import httpx
from defusedxml import ElementTree

from toshokan.faces.opds.atom import ATOM, OPDS, OPENSEARCH, PSE

NS = {"a": ATOM, "opds": OPDS, "os": OPENSEARCH, "pse": PSE}
CATALOG = "application/atom+xml;profile=opds-catalog"
ACQUISITION = f"{CATALOG};kind=acquisition"
NAVIGATION = f"{CATALOG};kind=navigation"
STREAM = "http://vaemendis.net/opds-pse/stream"


def check_atom(feed: Element) -> None:
    """What RFC 4287 requires of a feed and its entries, as a validating reader checks it."""
    assert feed.tag == f"{{{ATOM}}}feed"
    for name in ("id", "title", "updated"):
        assert len(feed.findall(f"a:{name}", NS)) == 1, f"feed needs exactly one {name}"
    entries = feed.findall("a:entry", NS)
    has_author = feed.find("a:author/a:name", NS) is not None
    assert has_author or all(e.find("a:author", NS) is not None for e in entries)
    for entry in entries:
        for name in ("id", "title", "updated"):
            assert len(entry.findall(f"a:{name}", NS)) == 1, f"entry needs exactly one {name}"
        assert entry.find("a:content", NS) is not None or any(
            link.get("rel") == "alternate" for link in entry.findall("a:link", NS)
        )
    for link in feed.iter(f"{{{ATOM}}}link"):
        assert link.get("href") and link.get("rel") and link.get("type")
    # Atom puts every metadata element before the first entry.
    children = list(feed)
    first_entry = next((i for i, c in enumerate(children) if c.tag == f"{{{ATOM}}}entry"), None)
    if first_entry is not None:
        assert all(c.tag == f"{{{ATOM}}}entry" for c in children[first_entry:])


def link(element: Element, rel: str, type_prefix: str = "") -> Element | None:
    for found in element.findall("a:link", NS):
        if found.get("rel") == rel and (found.get("type") or "").startswith(type_prefix):
            return found
    return None


def href(element: Element, rel: str, type_prefix: str = "") -> str:
    found = link(element, rel, type_prefix)
    assert found is not None, f"no {rel} link"
    value = found.get("href")
    assert value
    return value


def entry_titled(feed: Element, title: str) -> Element:
    for entry in feed.findall("a:entry", NS):
        if entry.findtext("a:title", namespaces=NS) == title:
            return entry
    titles = [e.findtext("a:title", namespaces=NS) for e in feed.findall("a:entry", NS)]
    raise AssertionError(f"no entry {title!r} in {titles}")


@dataclass
class Reader:
    client: httpx.AsyncClient
    auth: Any = None
    fetched: list[str] = field(default_factory=list)

    async def get(self, url: str, **options: Any) -> httpx.Response:
        self.fetched.append(url)
        return await self.client.get(url, auth=self.auth, **options)

    async def feed(self, url: str) -> Element:
        answer = await self.get(url)
        assert answer.status_code == 200, (url, answer.status_code, answer.text[:300])
        assert answer.headers["content-type"].startswith(CATALOG)
        feed: Element = ElementTree.fromstring(answer.content)
        check_atom(feed)
        return feed

    async def search(self, feed: Element, terms: str) -> Element:
        """Search as a reader does: the OpenSearch description's template, filled in."""
        description_url = href(feed, "search", "application/opensearchdescription+xml")
        answer = await self.get(description_url)
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("application/opensearchdescription+xml")
        # Unprefixed, for readers whose parsers look elements up by their plain names.
        assert b"<OpenSearchDescription xmlns=" in answer.content
        description = ElementTree.fromstring(answer.content)
        url = description.find("os:Url", NS)
        assert url is not None and url.get("type", "").startswith(CATALOG)
        template = url.get("template", "")
        assert "{searchTerms}" in template
        return await self.feed(template.replace("{searchTerms}", terms))

    async def every_entry(self, url: str, limit: int = 50) -> list[Element]:
        """Follow ``next`` links until the end, as a reader scrolling a long list."""
        entries: list[Element] = []
        for _ in range(limit):
            feed = await self.feed(url)
            entries += feed.findall("a:entry", NS)
            following = link(feed, "next")
            if following is None:
                return entries
            url = following.get("href") or ""
        raise AssertionError("the list never ends")

    async def streamable(self, chapter: Element) -> Element:
        """The entry that streams a chapter, found as a reader finds it.

        A series feed's entry carries the PSE link itself when the host knows the
        page count; otherwise it leads (``subsection``) to a feed of one entry that
        does. A chapter feed stands for its one entry.
        """
        if chapter.tag == f"{{{ATOM}}}feed":
            found = chapter.find("a:entry", NS)
            assert found is not None
            chapter = found
        if link(chapter, STREAM) is not None:
            return chapter
        feed = await self.feed(href(chapter, "subsection", CATALOG))
        entry = feed.find("a:entry", NS)
        assert entry is not None and link(entry, STREAM) is not None
        return entry

    async def read_chapter(self, chapter: Element, max_width: int | None = None) -> list[bytes]:
        """Every page through the PSE template, 0-based, then one past the end."""
        entry = await self.streamable(chapter)
        stream = link(entry, STREAM)
        assert stream is not None
        count = int(stream.get(f"{{{PSE}}}count") or -1)
        template = stream.get("href") or ""
        assert "{pageNumber}" in template and "{maxWidth}" in template
        width = str(max_width) if max_width else ""

        def page_url(n: int) -> str:
            return template.replace("{pageNumber}", str(n)).replace("{maxWidth}", width)

        images = []
        for number in range(count):
            answer = await self.get(page_url(number))
            assert answer.status_code == 200, (number, answer.text[:200])
            assert answer.headers["content-type"] in ("image/jpeg", "image/png", "image/gif")
            images.append(answer.content)
        past = await self.get(page_url(count))
        assert past.status_code == 404
        return images
