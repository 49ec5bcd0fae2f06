"""Reading OPDS 1.2 Atom feeds (with the Page Streaming Extension) and OpenSearch descriptions.

XML comes from strangers, so it is parsed with ``defusedxml`` (no entity
expansion, no external references). Elements and attributes are matched by
local name, so a feed served without the Atom namespace (as Codex does) still
reads, with a warning. Anything unreadable in one entry drops that field,
never the page.
"""

import re
import xml.etree.ElementTree as ET
from urllib.parse import urljoin, urlsplit

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from toshokan.sources.opds.dates import parse_date
from toshokan.sources.opds.feed import (
    MAX_STREAM_PAGES,
    Acquisition,
    Facet,
    Feed,
    FeedEntry,
    Stream,
)

ATOM_NS = "http://www.w3.org/2005/Atom"
ACQUISITION = "http://opds-spec.org/acquisition"
PSE_STREAM = "http://vaemendis.net/opds-pse/stream"
FACET = "http://opds-spec.org/facet"
COVERS = ("http://opds-spec.org/image", "http://opds-spec.org/cover", "x-stanza-cover-image")
THUMBNAILS = ("http://opds-spec.org/image/thumbnail", "x-stanza-cover-image-thumbnail")
#: Links that are about the feed itself, never to another catalogue page.
NOT_NAVIGATION = frozenset(
    {"self", "start", "up", "next", "previous", "prev", "first", "last", "search"}
)
#: An ``&`` that starts no entity reference: invalid XML that servers still send.
_BARE_AMPERSAND = re.compile(rb"&(?!(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#x[0-9A-Fa-f]+);)")


_ESCAPED_PARAMETER = re.compile(r"%7B(pageNumber|maxWidth)%7D", re.IGNORECASE)


def unescape_template(href: str) -> str:
    """A PSE template whose ``{pageNumber}`` a server percent-encoded, made usable again."""
    return _ESCAPED_PARAMETER.sub(lambda m: "{" + m.group(1) + "}", href)


_DECORATION = re.compile(r"^[^\w(\[]+")


class NotXml(ValueError):
    """The document is not readable XML, even leniently."""


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _attr(element: ET.Element, name: str) -> str:
    for key, value in element.attrib.items():
        if _local(key) == name:
            return value
    return ""


def _children(element: ET.Element, name: str) -> list[ET.Element]:
    return [child for child in element if _local(child.tag) == name]


def _text(element: ET.Element, *names: str) -> str:
    for name in names:
        for child in _children(element, name):
            text = "".join(child.itertext()).strip()
            if text:
                return text
    return ""


def parse_xml(data: bytes, warnings: list[str]) -> ET.Element:
    """The document's root; a bare ``&`` is escaped and retried, with a warning."""
    try:
        root: ET.Element = SafeET.fromstring(data)
        return root
    except DefusedXmlException as error:
        raise NotXml(f"refused XML ({type(error).__name__})") from None
    except ET.ParseError:
        pass
    fixed = _BARE_AMPERSAND.sub(b"&amp;", data)
    try:
        root = SafeET.fromstring(fixed)
        assert isinstance(root, ET.Element)
    except (ET.ParseError, DefusedXmlException) as error:
        raise NotXml(f"not well-formed XML ({type(error).__name__})") from None
    warnings.append("bare '&' in the XML read as '&amp;'")
    return root


def parse_feed(data: bytes, url: str) -> Feed:
    """One Atom catalogue page fetched from ``url``."""
    warnings: list[str] = []
    root = parse_xml(data, warnings)
    if _local(root.tag) != "feed":
        raise NotXml(f"the document is a <{_local(root.tag)}>, not an Atom <feed>")
    if not str(root.tag).startswith("{"):
        warnings.append("the feed has no Atom namespace")
    feed = Feed(
        url=url,
        title=_text(root, "title"),
        subtitle=_text(root, "subtitle"),
        updated=parse_date(_text(root, "updated")),
        warnings=warnings,
    )
    icon = _text(root, "icon", "logo")
    feed.icon = urljoin(url, icon) if icon else None
    for link in _children(root, "link"):
        rel, href, kind = _attr(link, "rel"), _attr(link, "href"), _attr(link, "type")
        if not href:
            continue
        target = urljoin(url, href)
        if rel == "next":
            feed.next = target
        elif rel == "search":
            if "opensearchdescription" in kind:
                feed.search_description = target
            elif "{searchTerms}" in href:
                feed.search_template = target
        elif rel == FACET:
            group = _attr(link, "facetGroup")
            feed.facets.append(Facet(group=group, title=_attr(link, "title"), href=target))
    start = next(
        (
            urljoin(url, _attr(k, "href"))
            for k in _children(root, "link")
            if _attr(k, "rel") == "start"
        ),
        None,
    )
    for element in _children(root, "entry"):
        entry = _entry(element, url)
        if entry.is_book or entry.feed is None:
            feed.entries.append(entry)
        elif entry.feed in (start, url):
            continue  # "start of catalog": a way back, not a work
        elif _same_path(entry.feed, url):
            # Views of this very feed sent as entries (Codex's "Order By Name"): facets.
            feed.facets.append(_entry_facet(entry.title, entry.feed))
            warning = "sort and view links sent as feed entries"
            if warning not in feed.warnings:
                feed.warnings.append(warning)
        else:
            feed.entries.append(entry)
    return feed


def _same_path(a: str, b: str) -> bool:
    return urlsplit(a)[:3] == urlsplit(b)[:3]


def plain_title(title: str) -> str:
    """A title without the symbols some servers decorate it with (``⊙ Series View``)."""
    return _DECORATION.sub("", title).strip()


def _entry_facet(title: str, href: str) -> Facet:
    words = plain_title(title)
    group = "Sort" if words.lower().startswith(("order by", "sort by")) else "View"
    return Facet(group=group, title=words, href=href)


def _entry(element: ET.Element, url: str) -> FeedEntry:
    title = _text(element, "title") or "Unknown Title"
    entry = FeedEntry(
        id=_text(element, "id") or title,
        title=title,
        updated=parse_date(_text(element, "updated", "modified")),
        # A book's release (dc:issued) before when the catalogue first listed it (Codex's published).
        published=parse_date(_text(element, "issued", "published", "date")),
        authors=[_text(a, "name") for a in _children(element, "author") if _text(a, "name")],
        summary=_text(element, "summary", "content", "description"),
        language=_text(element, "language").lower(),
    )
    for category in _children(element, "category"):
        label = _attr(category, "label") or _attr(category, "term")
        if label.strip():
            entry.categories.append(label.strip())
    for link in _children(element, "link"):
        _add_link(entry, link, url)
    return entry


def _add_link(entry: FeedEntry, link: ET.Element, url: str) -> None:
    rel, href, kind = _attr(link, "rel"), _attr(link, "href"), _attr(link, "type")
    if not href:
        return
    target = urljoin(url, href)
    if rel == PSE_STREAM:
        count = _attr(link, "count")
        if count.isdigit() and 0 < int(count) <= MAX_STREAM_PAGES:
            entry.stream = Stream(template=unescape_template(target), count=int(count))
    elif rel.startswith(ACQUISITION):
        entry.acquisitions.append(Acquisition(href=target, media_type=kind.lower()))
    elif rel in COVERS:
        entry.cover = target
    elif rel in THUMBNAILS:
        entry.thumbnail = target
    elif "atom+xml" in kind or "opds" in kind:
        if rel not in NOT_NAVIGATION and entry.feed is None and "type=entry" not in kind:
            entry.feed = target
    elif kind.startswith("text/html") and entry.page is None:
        entry.page = target


def parse_opensearch(data: bytes, base: str, warnings: list[str]) -> str | None:
    """The Atom search template of an OpenSearch description, or None when it offers none."""
    root = parse_xml(data, warnings)
    fallback: str | None = None
    for url_element in _children(root, "Url"):
        template = _attr(url_element, "template")
        if "{searchTerms}" not in template:
            continue
        kind = _attr(url_element, "type")
        if "atom" in kind or "opds" in kind:
            return urljoin(base, template)
        fallback = fallback or urljoin(base, template)
    return fallback
