"""comiccatcher, a desktop OPDS 2.0/1.2 reader, as its own code reads and writes the catalogue.

Written from comiccatcher 0.7.5 (PyPI), ``src/comiccatcher/``:

- ``api/progression.py``: ``ProgressionSync``. A progression link is written in
  one of two forms, chosen by its rel: the *flat* form for
  ``http://opds-spec.org/progression`` (``{modified, device: {id: "urn:uuid:..",
  name}, progression, position, title}``), the *locator* form for every other
  progression rel, the Cantook one included (``{modified, device, locator:
  {href, type, title, locations: {progression, totalProgression,
  total_progression, position}}}``). ``extract_locations`` reads back a
  position (``locations.position``, else the top-level ``position``) and a share
  (``totalProgression``, ``total_progression``, ``progression``, in that order;
  then the top level's).
- ``ui/views/feed_reader.py``: on a page change to index ``idx`` of ``total``
  the share sent is ``idx / (total - 1)`` (0 for one page) and the position
  ``idx + 1``; on opening, a position above 0 reopens at ``position - 1``, else
  the share at ``int(share * count)``, clamped into the chapter. The
  progression link is the first of the publication's links, then of the
  manifest's, whose rel is one it knows (``_discover_progression_url``).
- ``ui/views/feed_detail.py`` and ``api/feed_reconciler.py``: the detail view
  fetches the publication's manifest (its first link typed
  ``application/divina+json``, ``webpub+json`` or ``opds-publication+json``) and
  shows the manifest in place of the feed's publication; the Download button is
  enabled only by a link of the shown document whose rel is ``acquisition``,
  ``http://opds-spec.org/acquisition`` or ``.../acquisition/open-access`` and
  whose type is an archive it reads (``_find_acquisition_link``: CBZ first).
- ``api/feed_reconciler.py`` (step 7) and ``ui/app_layout.py``
  (``_execute_search``): a feed's search is its first ``search`` link that is
  not an OpenSearch description; ``{?query}`` is filled in as ``?query=``.
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx

FLAT, LOCATOR = "flat", "locator"
PROGRESSION_RELS = (
    "http://opds-spec.org/rel/progression",
    "http://opds-spec.org/progression",
    "http://readium.org/rel/progression",
    "http://readium.org/progression",
    "http://librarysimplified.org/terms/rel/state",
    "http://www.cantook.com/api/progression",
)
MANIFEST_TYPES = (
    "application/webpub+json",
    "application/divina+json",
    "application/opds-publication+json",
)
ACQUISITION_RELS = (
    "acquisition",
    "http://opds-spec.org/acquisition",
    "http://opds-spec.org/acquisition/open-access",
)
#: The archive types it reads, best first (a subset of its table).
ARCHIVE_PRIORITY = {
    "application/vnd.comicbook+zip": 100,
    "application/x-cbz": 100,
    "application/zip": 95,
    "application/vnd.comicbook-rar": 90,
    "application/x-cb7": 80,
    "application/pdf": 50,
    "application/octet-stream": 10,
}


def rels_of(link: dict[str, Any]) -> list[str]:
    rel = link.get("rel")
    return [rel] if isinstance(rel, str) else list(rel or [])


def progression_link(links: list[dict[str, Any]], rel: str | None = None) -> tuple[str, str]:
    """The first link with a progression rel it knows (or exactly ``rel``) and its form."""
    for link in links:
        for found in rels_of(link):
            if (rel is None and found in PROGRESSION_RELS) or found == rel:
                form = FLAT if found == "http://opds-spec.org/progression" else LOCATOR
                return link["href"], form
    raise AssertionError(f"no progression link in {links}")


def share_of_page(index: int, total: int) -> float:
    """What it sends on turning to page ``index`` (from 0) of ``total``."""
    return index / (total - 1) if total > 1 else 0.0


def payload(form: str, device_id: str, index: int, page: dict[str, Any], total: int) -> Any:
    """The document it sends at page ``index`` of the manifest's reading order."""
    now = datetime.now(UTC).isoformat()
    device = {"id": f"urn:uuid:{device_id}", "name": f"ComicCatcher PyQt6 ({device_id[:8]})"}
    fraction, position = share_of_page(index, total), index + 1
    title = f"Page {index + 1}"
    if form == FLAT:
        return {
            "modified": now,
            "device": device,
            "progression": fraction,
            "position": position,
            "title": title,
        }
    return {
        "modified": now,
        "device": device,
        "locator": {
            "locations": {
                "progression": fraction,
                "totalProgression": fraction,
                "total_progression": fraction,
                "position": position,
            },
            "title": title,
            "href": page["href"],
            "type": page.get("type", "image/jpeg"),
        },
    }


def extract_locations(data: Any) -> tuple[float | None, int | None]:
    """(share, position) from either form, as ``extract_locations`` finds them."""
    if not data:
        return None, None
    locations = data.get("locator", {}).get("locations", {})
    position = locations.get("position")
    if position is None:
        position = data.get("position")
    share = locations.get("totalProgression")
    if share is None:
        share = locations.get("total_progression")
    if share is None:
        share = locations.get("progression")
    if share is None:
        share = (
            data.get("totalProgression") or data.get("total_progression") or data.get("progression")
        )
    return (
        float(share) if share is not None else None,
        int(position) if position is not None else None,
    )


def reopened_index(data: Any, count: int) -> int:
    """The page (from 0) the reader opens a chapter of ``count`` pages at."""
    share, position = extract_locations(data)
    index = 0
    if position is not None and position > 0:
        index = position - 1
    elif share is not None:
        index = int(share * count)
    return max(0, min(index, count - 1))


async def read_progression(client: httpx.AsyncClient, url: str, **kw: Any) -> Any:
    """``get_progression``: the document on a 200 with a body, else nothing."""
    answer = await client.get(url, **kw)
    if answer.status_code != 200 or not answer.content:
        return None
    return answer.json()


def download_link(document: dict[str, Any]) -> str | None:
    """The link the Download button fetches, or None (the button stays disabled)."""
    best: tuple[int, str] | None = None
    for link in document.get("links") or []:
        rels = [rel.lower() for rel in rels_of(link)]
        media = (link.get("type") or "").lower().split(";")[0].strip()
        priority = ARCHIVE_PRIORITY.get(media, 0)
        acquires = any(rel in ACQUISITION_RELS for rel in rels) and priority > 0
        if acquires and (best is None or priority > best[0]):
            best = (priority, link["href"])
    return None if best is None else best[1]


def manifest_link(publication: dict[str, Any]) -> str:
    return next(k["href"] for k in publication["links"] if k.get("type") in MANIFEST_TYPES)


@dataclass(frozen=True)
class SearchTemplate:
    href: str

    def url(self, query: str) -> str:
        """``_execute_search``: the template filled in with the quoted query."""
        safe = quote(query)
        if "{?query}" in self.href:
            return self.href.replace("{?query}", f"?query={safe}")
        if "{searchTerms}" in self.href:
            return self.href.replace("{searchTerms}", safe)
        return f"{self.href}{'&' if '?' in self.href else '?'}query={safe}"


def search_template(feed: dict[str, Any]) -> SearchTemplate | None:
    """A feed's search: its first ``search`` link that is not an OpenSearch description,
    a JSON or Atom one preferred."""
    best: dict[str, Any] | None = None
    for link in feed.get("links") or []:
        if "search" not in rels_of(link):
            continue
        media = link.get("type") or ""
        if "opensearchdescription" in media:
            continue
        if "atom+xml" in media or "xml" in media or "json" in media:
            best = link
            break
        best = best or link
    return None if best is None else SearchTemplate(best["href"])
