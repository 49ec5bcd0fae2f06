"""Reading OPDS 2.0 JSON feeds into the same :class:`Feed` the Atom reader gives.

Publications are books; navigation links and group navigation are links to
other feeds. Search is the ``rel="search"`` link, a URI template (``{?query}``)
rewritten to the ``{searchTerms}`` form the rest of the adapter fills in.
Fields of an unexpected type are skipped, never a failure.
"""

import re
from typing import Any
from urllib.parse import urljoin

from toshokan.sources.opds.atom import (
    ACQUISITION,
    COVERS,
    PSE_STREAM,
    THUMBNAILS,
    unescape_template,
)
from toshokan.sources.opds.dates import parse_date
from toshokan.sources.opds.feed import (
    MAX_STREAM_PAGES,
    Acquisition,
    Facet,
    Feed,
    FeedEntry,
    Stream,
)

#: ``{?query}``, ``{?query,page}``, ``{query}``: the URI template forms servers use for search.
_QUERY_TEMPLATE = re.compile(r"\{[?&]?query(?:,[^}]*)?\}")


class NotOpds2(ValueError):
    """The JSON is not an OPDS 2.0 feed."""


def _dicts(value: object) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _str(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _names(value: object) -> list[str]:
    """Contributors as OPDS 2.0 allows them: a string, an object with ``name``, or a list of either."""
    items = value if isinstance(value, list) else [value]
    names = []
    for item in items:
        name = _str(item.get("name")) if isinstance(item, dict) else _str(item)
        if name:
            names.append(name)
    return names


def search_template(href: str) -> str | None:
    if "{searchTerms}" in href:
        return href
    found = _QUERY_TEMPLATE.search(href)
    if found is None:
        return None
    joiner = "&" if "?" in href[: found.start()] else "?"
    prefix = "" if found.group(0).startswith("{query") else f"{joiner}query="
    return f"{href[: found.start()]}{prefix}{{searchTerms}}{href[found.end() :]}"


def parse_feed(document: object, url: str) -> Feed:
    if not isinstance(document, dict) or not isinstance(document.get("metadata"), dict):
        raise NotOpds2("the JSON has no OPDS 2.0 'metadata' object")
    metadata = document["metadata"]
    feed = Feed(
        url=url,
        title=_str(metadata.get("title")),
        subtitle=_str(metadata.get("subtitle")),
        updated=parse_date(metadata.get("modified")),
    )
    for link in _dicts(document.get("links")):
        rel, href = _rels(link), _str(link.get("href"))
        if not href:
            continue
        if "next" in rel:
            feed.next = urljoin(url, href)
        elif "search" in rel:
            template = search_template(href)
            if template:
                feed.search_template = urljoin(url, template)
    for facet in _dicts(document.get("facets")):
        group = (
            _str(facet.get("metadata", {}).get("title"))
            if isinstance(facet.get("metadata"), dict)
            else ""
        )
        for link in _dicts(facet.get("links")):
            if _str(link.get("href")):
                feed.facets.append(
                    Facet(
                        group=group, title=_str(link.get("title")), href=urljoin(url, link["href"])
                    )
                )
    sections = [document, *_dicts(document.get("groups"))]
    for section in sections:
        for link in _dicts(section.get("navigation")):
            href = _str(link.get("href"))
            if href:
                title = _str(link.get("title")) or "Untitled"
                feed.entries.append(
                    FeedEntry(id=urljoin(url, href), title=title, feed=urljoin(url, href))
                )
        feed.entries.extend(_publication(p, url) for p in _dicts(section.get("publications")))
    return feed


def _rels(link: dict[str, Any]) -> list[str]:
    rel = link.get("rel")
    return [r for r in rel if isinstance(r, str)] if isinstance(rel, list) else [_str(rel)]


def _publication(publication: dict[str, Any], url: str) -> FeedEntry:
    metadata = publication.get("metadata") if isinstance(publication.get("metadata"), dict) else {}
    assert isinstance(metadata, dict)
    title = _str(metadata.get("title")) or "Unknown Title"
    language = metadata.get("language")
    if isinstance(language, list):
        language = language[0] if language else ""
    entry = FeedEntry(
        id=_str(metadata.get("identifier")) or title,
        title=title,
        updated=parse_date(metadata.get("modified")),
        published=parse_date(metadata.get("published")),
        authors=_names(metadata.get("author")),
        summary=_str(metadata.get("description")),
        categories=_names(metadata.get("subject")),
        language=_str(language).lower(),
    )
    belongs = metadata.get("belongsTo")
    if isinstance(belongs, dict):
        for series in _dicts(belongs.get("series")) or _dicts([belongs.get("series")]):
            entry.series = _str(series.get("name"))
            position = series.get("position")
            if isinstance(position, int | float) and position >= 0:
                entry.position = float(position)
            break
    for link in _dicts(publication.get("links")):
        _add_link(entry, link, url)
    for image in _dicts(publication.get("images")):
        href = _str(image.get("href"))
        if href:
            entry.cover = entry.cover or urljoin(url, href)
    return entry


def _add_link(entry: FeedEntry, link: dict[str, Any], url: str) -> None:
    href, kind = _str(link.get("href")), _str(link.get("type")).lower()
    if not href:
        return
    target = urljoin(url, href)
    for rel in _rels(link):
        if rel == PSE_STREAM:
            properties = link.get("properties") if isinstance(link.get("properties"), dict) else {}
            assert isinstance(properties, dict)
            count = properties.get("numberOfItems", properties.get("count", link.get("count")))
            if isinstance(count, int) and 0 < count <= MAX_STREAM_PAGES:
                entry.stream = Stream(template=unescape_template(target), count=count)
        elif rel.startswith(ACQUISITION):
            entry.acquisitions.append(Acquisition(href=target, media_type=kind))
        elif rel in COVERS:
            entry.cover = target
        elif rel in THUMBNAILS:
            entry.thumbnail = target
        elif rel in ("self", "alternate") and kind.startswith("text/html"):
            entry.page = target
        elif ("opds" in kind or "json" in kind) and rel not in ("self",):
            entry.feed = entry.feed or target
