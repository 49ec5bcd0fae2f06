"""What an Atom list feed shows of each title: the search's answer, and details where cheap.

A search answers a title, a slug and a cover per result, and the details
when the source had them with the result (a MangaDex search does). Otherwise
the summary and tags come from the title's details, which for a remote
source cost one upstream request each (a list of 20 would spend 20 of
MangaDex's budget), so they are asked only of a source whose content is files
here; the core caches them, so the series feed the reader opens next finds
them ready.
"""

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from toshokan.errors import HostError
from toshokan.faces.opds.context import CatalogueVisit
from toshokan.models import Entry, Manga


@dataclass(frozen=True)
class Listed:
    slug: str
    title: str
    cover: str | None
    details: Manga | None = None


async def listed_titles(visit: CatalogueVisit, results: Sequence[Entry]) -> list[Listed]:
    """The results of one page of a search, with their details where the source has them here."""
    if not visit.holds_files:  # a remote source: what the search answered, details included
        return [Listed(e.slug, e.title, e.cover, e.details) for e in results]

    async def details(entry: Entry) -> Manga | None:
        try:
            return (await visit.source_visit.manga(entry.slug)).value
        except HostError:  # gone since the search: listed as the search had it
            return None

    found = await asyncio.gather(*(details(entry) for entry in results))
    return [Listed(e.slug, e.title, e.cover, d) for e, d in zip(results, found, strict=True)]
