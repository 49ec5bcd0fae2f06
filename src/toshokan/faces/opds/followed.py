"""What both catalogues show of a reader's follows: the series they follow, and a page of their
unread updates with what a reader needs to open each at once.

Updates are the core's (new chapters of followed series, newest found first);
the catalogues list the *unread* ones, since a comic reader has no other way to
tell them apart: a chapter finished on any face (KOReader, a Komga app, the web
reader, a page streamed to its end here) leaves the feed. An update is shown
only while it can be opened: its source served, its chapter still listed by it.
Each is told as a source's feed tells a chapter: its page count (the one the
check saw, or asked of a source that holds files, a read of its own index),
the reader's place in it, and its file where the source offers one.
"""

import asyncio
from dataclasses import dataclass

from starlette.requests import Request

from toshokan.core import Download
from toshokan.core.follows import Follow
from toshokan.core.follows.found import Update
from toshokan.core.http import Entry
from toshokan.core.progress import ChapterRef, Position
from toshokan.errors import HostError
from toshokan.faces.opds.access import PASSING
from toshokan.faces.opds.context import CatalogueVisit, page_of

#: Updates one page of the feed lists.
UPDATES_PER_PAGE = 50


@dataclass(frozen=True)
class Shown:
    """An unread update as a feed lists it, with the context of its source."""

    update: Update
    visit: CatalogueVisit
    #: Its page count (0: not known here, the chapter's own feed asks for it).
    pages: int
    position: Position | None
    file: Download | None


@dataclass(frozen=True)
class UpdatesPage:
    shown: list[Shown]
    page: int
    more: bool


async def followed(entry: Entry, reader: str) -> list[Follow]:
    """The reader's follows of sources served now (those of a removed source lead nowhere)."""
    found = await entry.core.follows.follows_of(reader)
    return [f for f in found if f.served]


async def unread_updates(request: Request, entry: Entry, reader: str) -> UpdatesPage:
    """A page of the reader's unread updates, each with what opens it."""
    core, caller = entry.core, entry.caller
    page = page_of(request)
    found = await core.follows.updates(
        reader, UPDATES_PER_PAGE + 1, (page - 1) * UPDATES_PER_PAGE, unread_only=True
    )
    listed = [u for u in found[:UPDATES_PER_PAGE] if u.removed is None]
    serving = {hosted.slug for hosted in core.sources.serving()}
    visits: dict[str, CatalogueVisit] = {}
    for slug in {u.source for u in listed} & serving:
        visits[slug] = CatalogueVisit(core, await core.visit(slug, caller, PASSING), entry, reader)
    shown = await asyncio.gather(
        *(_shown(u, visits[u.source]) for u in listed if u.source in visits)
    )
    return UpdatesPage(list(shown), page, len(found) > UPDATES_PER_PAGE)


async def _shown(update: Update, visit: CatalogueVisit) -> Shown:
    ref = ChapterRef(update.source, update.manga, update.chapter)
    pages, file = update.pages or 0, None
    if visit.holds_files:
        try:
            pages = pages or len(await visit.source_visit.page_list(update.manga, update.chapter))
            file = await visit.source_visit.download(update.manga, update.chapter)
        except HostError:  # gone since the check saw it: the entry leads to its own feed
            pass
    position = await visit.core.progress.aposition(visit.reader, ref)
    return Shown(update, visit, pages, position, file)
