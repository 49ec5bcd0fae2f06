"""A reader's updates as an Atom feed (RFC 4287), for any feed reader."""

import datetime
import hashlib
from collections.abc import Sequence
from xml.etree import ElementTree as ET

from toshokan.core.follows.found import Update

ATOM = "http://www.w3.org/2005/Atom"
ET.register_namespace("", ATOM)


def _element(
    parent: ET.Element, name: str, text: str | None = None, **attributes: str
) -> ET.Element:
    element = ET.SubElement(parent, f"{{{ATOM}}}{name}", attributes)
    if text is not None:
        element.text = _printable(text)
    return element


def _printable(text: str) -> str:
    """``text`` without the control characters XML 1.0 cannot carry (an upstream's titles)."""
    return "".join(c for c in text if c in "\t\n\r" or ord(c) >= 32)


def _time(moment: float) -> str:
    when = datetime.datetime.fromtimestamp(moment, datetime.UTC).replace(microsecond=0)
    return when.isoformat().replace("+00:00", "Z")


def updates_feed(updates: Sequence[Update], address: str, host_name: str) -> bytes:
    """The feed of ``updates`` (newest first), its own address ``address`` (a path on the host)."""
    feed = ET.Element(f"{{{ATOM}}}feed")
    _element(
        feed,
        "id",
        f"urn:toshokan:{host_name}:updates:{hashlib.sha256(address.encode()).hexdigest()[:16]}",
    )
    _element(feed, "title", f"New chapters on {host_name}")
    _element(feed, "updated", _time(updates[0].found if updates else 0.0))
    author = _element(feed, "author")
    _element(author, "name", host_name)
    _element(feed, "link", rel="self", href=address, type="application/atom+xml")
    for update in updates:
        entry = _element(feed, "entry")
        key = f"{update.source}/{update.manga}/{update.chapter}"
        _element(entry, "id", f"urn:toshokan:{host_name}:chapter:{key}")
        title = f"{update.series_title}: {update.title}"
        if update.kind == "version":
            title += f" ({update.language}, {update.scanlator})"
        _element(entry, "title", title)
        _element(entry, "updated", _time(update.found))
        _element(entry, "published", _time(update.date))
        summary = "unread" if update.unread else "read"
        if update.removed is not None:
            summary += "; removed by its source since"
        _element(entry, "summary", summary)
        _element(entry, "category", term=update.source)
    body: bytes = ET.tostring(feed, encoding="utf-8", xml_declaration=True)
    return body
