"""One search over every source that lets the caller in, for both catalogues' roots.

Each source is asked the same page of its own search (by relevance, or its
browsing order for an empty query), ``PER_SOURCE`` titles at most; a source
that refuses or fails is left out, so one source down never empties the answer.
"""

import asyncio
import logging
from dataclasses import dataclass

from toshokan.core import HostedSource
from toshokan.core.http import Entry
from toshokan.errors import HostError
from toshokan.faces.opds.access import PASSING
from toshokan.faces.opds.context import PER_SOURCE, CatalogueVisit
from toshokan.faces.opds.listed import Listed, listed_titles
from toshokan.faces.opds.searches import ordered, search_sort

log = logging.getLogger("toshokan.opds")


@dataclass(frozen=True)
class Found:
    """One source's part of the answer: its titles on this page, and whether it has more."""

    visit: CatalogueVisit
    titles: list[Listed]
    more: bool


async def search_everywhere(entry: Entry, reader: str, query: str, page: int) -> list[Found]:
    """Page ``page`` of ``query`` in every serving source, in the host's order of sources."""
    core, caller = entry.core, entry.caller

    async def one(hosted: HostedSource) -> Found | None:
        try:
            visit = CatalogueVisit(
                core, await core.visit(hosted.slug, caller, PASSING), entry, reader
            )
            body = {
                "query": query,
                "page": page,
                "limit": PER_SOURCE,
                **ordered(search_sort(visit.config)),
            }
            found = (await visit.source_visit.search(body)).value
            return Found(visit, await listed_titles(visit, found.results), found.more)
        except HostError as error:
            log.info("search over every source: %s skipped (%s)", hosted.slug, error.code)
            return None

    return [found for found in await asyncio.gather(*map(one, core.sources.serving())) if found]
