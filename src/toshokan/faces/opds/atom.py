"""Atom documents with the OPDS 1.2, OpenSearch and OPDS-PSE vocabularies.

Small builders over :mod:`xml.etree.ElementTree`: a face says which feed,
entries and links it wants; this module knows the namespaces, the media types
and the element order Atom's schema requires (metadata before entries).
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from xml.etree import ElementTree as ET
from xml.sax.saxutils import escape, quoteattr

from toshokan.core import with_query

ATOM = "http://www.w3.org/2005/Atom"
OPDS = "http://opds-spec.org/2010/catalog"
OPENSEARCH = "http://a9.com/-/spec/opensearch/1.1/"
PSE = "http://vaemendis.net/opds-pse/ns"
DCTERMS = "http://purl.org/dc/terms/"
for _prefix, _uri in {
    "": ATOM,
    "opds": OPDS,
    "opensearch": OPENSEARCH,
    "pse": PSE,
    "dcterms": DCTERMS,
}.items():
    ET.register_namespace(_prefix, _uri)

CATALOG = "application/atom+xml;profile=opds-catalog"
NAVIGATION = f"{CATALOG};kind=navigation"
ACQUISITION = f"{CATALOG};kind=acquisition"
OPENSEARCH_TYPE = "application/opensearchdescription+xml"

REL_IMAGE = "http://opds-spec.org/image"
REL_THUMBNAIL = "http://opds-spec.org/image/thumbnail"
REL_FACET = "http://opds-spec.org/facet"
REL_STREAM = "http://vaemendis.net/opds-pse/stream"
REL_ACQUISITION = "http://opds-spec.org/acquisition"


def _q(namespace: str, name: str) -> str:
    return f"{{{namespace}}}{name}"


def timestamp(moment: datetime | None = None) -> str:
    moment = moment or datetime.now(UTC)
    return moment.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass
class Link:
    rel: str
    href: str
    type: str
    title: str | None = None
    #: Extra attributes in other namespaces (``pse:count``, ``opds:facetGroup``), by qualified name.
    extra: Mapping[str, str] = field(default_factory=dict)

    def element(self, parent: ET.Element) -> ET.Element:
        attributes = {"rel": self.rel, "href": self.href, "type": self.type}
        if self.title:
            attributes["title"] = self.title
        attributes.update(self.extra)
        cleaned = {name: clean(value) for name, value in attributes.items()}
        return ET.SubElement(parent, _q(ATOM, "link"), cleaned)


@dataclass
class AtomEntry:
    """An Atom ``<entry>`` of an OPDS feed: a title, a series or a chapter, with its links."""

    id: str
    title: str
    updated: str
    links: list[Link]
    content: str = ""
    authors: list[str] = field(default_factory=list)
    categories: list[tuple[str, str]] = field(default_factory=list)  # (term, label)
    language: str | None = None
    issued: str | None = None

    def element(self, parent: ET.Element) -> None:
        entry = ET.SubElement(parent, _q(ATOM, "entry"))
        _text(entry, "title", self.title)
        _text(entry, "id", self.id)
        _text(entry, "updated", self.updated)
        for name in self.authors:
            author = ET.SubElement(entry, _q(ATOM, "author"))
            _text(author, "name", name)
        for term, label in self.categories:
            ET.SubElement(entry, _q(ATOM, "category"), {"term": clean(term), "label": clean(label)})
        if self.language:
            ET.SubElement(entry, _q(DCTERMS, "language")).text = clean(self.language)
        if self.issued:
            ET.SubElement(entry, _q(DCTERMS, "issued")).text = self.issued
        content = ET.SubElement(entry, _q(ATOM, "content"), {"type": "text"})
        content.text = clean(self.content or self.title)
        for link in self.links:
            link.element(entry)


@dataclass
class Feed:
    id: str
    title: str
    links: list[Link]
    entries: list[AtomEntry]
    author: str = "toshokan"
    subtitle: str | None = None
    updated: str = field(default_factory=timestamp)
    total: int | None = None
    per_page: int | None = None
    start_index: int | None = None
    icon: str | None = None
    #: Atom's ``logo``: a larger image than the icon (a series' cover).
    logo: str | None = None
    #: Authors of what the feed describes (a series'), in place of ``author`` when any.
    authors: list[str] = field(default_factory=list)
    categories: list[tuple[str, str]] = field(default_factory=list)  # (term, label)

    def xml(self) -> bytes:
        feed = ET.Element(_q(ATOM, "feed"))
        _text(feed, "id", self.id)
        _text(feed, "title", self.title)
        if self.subtitle:
            _text(feed, "subtitle", self.subtitle)
        _text(feed, "updated", self.updated)
        if self.icon:
            _text(feed, "icon", self.icon)
        if self.logo:
            _text(feed, "logo", self.logo)
        for name in self.authors or [self.author]:
            author = ET.SubElement(feed, _q(ATOM, "author"))
            _text(author, "name", name)
        for term, label in self.categories:
            ET.SubElement(feed, _q(ATOM, "category"), {"term": clean(term), "label": clean(label)})
        if self.total is not None:
            ET.SubElement(feed, _q(OPENSEARCH, "totalResults")).text = str(self.total)
        if self.per_page is not None:
            ET.SubElement(feed, _q(OPENSEARCH, "itemsPerPage")).text = str(self.per_page)
        if self.start_index is not None:
            ET.SubElement(feed, _q(OPENSEARCH, "startIndex")).text = str(self.start_index)
        for link in self.links:
            link.element(feed)
        for entry in self.entries:
            entry.element(feed)
        return document(feed)


def _text(parent: ET.Element, name: str, value: str) -> None:
    ET.SubElement(parent, _q(ATOM, name)).text = clean(value)


#: The C0 controls XML 1.0 cannot carry (tab, newline and carriage return it can).
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


def clean(value: str) -> str:
    """Text XML 1.0 can carry: control characters an upstream let through are dropped."""
    return _CONTROLS.sub("", value)


def document(root: ET.Element) -> bytes:
    written: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return written


def opensearch_description(
    short_name: str, description: str, template: str, result_type: str = NAVIGATION
) -> bytes:
    """An OpenSearch 1.1 description whose one URL template answers an OPDS feed
    (a navigation feed of titles, as every search of this catalogue does).

    Written with OpenSearch as the default namespace (no prefix): readers with
    simple XML parsers look for ``<Url template=...>`` by its plain name.
    """
    return (
        "<?xml version='1.0' encoding='utf-8'?>\n"
        f'<OpenSearchDescription xmlns="{OPENSEARCH}">'
        f"<ShortName>{escape(clean(short_name)[:16])}</ShortName>"
        f"<Description>{escape(clean(description)[:1024])}</Description>"
        "<InputEncoding>UTF-8</InputEncoding><OutputEncoding>UTF-8</OutputEncoding>"
        f"<Url type={quoteattr(result_type)} template={quoteattr(template)}/>"
        "</OpenSearchDescription>"
    ).encode()


def pages(
    base: str, page: int, more: bool, feed_type: str, query: Iterable[tuple[str, str]] = ()
) -> list[Link]:
    """``first``, ``previous`` and ``next`` links of a paginated feed at ``base``."""
    kept = [(k, v) for k, v in query if k != "page"]

    def at(number: int) -> str:
        return with_query(base, [*kept, ("page", str(number))])

    links = [Link("first", at(1), feed_type)]
    if page > 1:
        links.append(Link("previous", at(page - 1), feed_type))
    if more:
        links.append(Link("next", at(page + 1), feed_type))
    return links
