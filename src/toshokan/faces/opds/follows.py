"""The Atom catalogue's pages of a reader's follows: *Following* (a navigation feed of the series
they follow, each leading to its series feed) and *Updates* (an acquisition feed of their
unread new chapters, newest found first, each streamed at once with its PSE link).

Both are the reader's own (``private``), and change as checks find chapters
and the reader reads, so they carry no remembered validators: a reader asking
again is answered afresh.
"""

from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import Urls
from toshokan.core.http import Entry
from toshokan.faces.opds import atom
from toshokan.faces.opds.atom import ACQUISITION, NAVIGATION, AtomEntry, Feed, Link
from toshokan.faces.opds.chapters import numbered_title
from toshokan.faces.opds.context import cache_control, signed_reader
from toshokan.faces.opds.entries import acquisition_link, stream_link
from toshokan.faces.opds.followed import UPDATES_PER_PAGE, Shown, followed, unread_updates
from toshokan.faces.opds.signin import catalogue

#: Where the two feeds are, beside the sources under ``/_/opds`` (no source is named so).
FOLLOWING, UPDATES = "_following", "_updates"


def when(moment: float) -> str:
    return atom.timestamp(datetime.fromtimestamp(moment, UTC))


def follows_entries(urls: Urls) -> list[AtomEntry]:
    """The root's entries that lead to the reader's follows."""
    now = atom.timestamp()
    return [
        AtomEntry(
            id="urn:toshokan:opds:updates",
            title="Updates",
            updated=now,
            content="New chapters of the series you follow, not read yet, newest first.",
            links=[Link("subsection", catalogue(urls, UPDATES), ACQUISITION)],
        ),
        AtomEntry(
            id="urn:toshokan:opds:following",
            title="Following",
            updated=now,
            content="The series you follow.",
            links=[Link("subsection", catalogue(urls, FOLLOWING), NAVIGATION)],
        ),
    ]


async def following(request: Request, entry: Entry) -> Response:
    reader = signed_reader(entry)
    urls = entry.urls
    entries = []
    for follow in await followed(entry, reader):
        series = follow.followed.series
        news = f"{follow.unread} new chapter{'s' if follow.unread != 1 else ''} not read yet"
        state = {"gone": "; its source no longer has it", "failing": "; its last check failed"}
        entries.append(
            AtomEntry(
                id=f"urn:toshokan:opds:{series.source}:{series.manga}",
                title=series.title,
                updated=when(series.last_change or follow.followed.since),
                content=news + state.get(series.state, "") + ".",
                links=[
                    Link(
                        "subsection",
                        catalogue(urls, series.source, "series", series.manga),
                        ACQUISITION,
                    )
                ],
            )
        )
    feed = Feed(
        id="urn:toshokan:opds:following",
        title="Following",
        links=[
            Link("self", catalogue(urls, FOLLOWING), NAVIGATION),
            Link("start", catalogue(urls), NAVIGATION),
            Link("up", catalogue(urls), NAVIGATION),
            Link("related", catalogue(urls, UPDATES), ACQUISITION, "Updates"),
        ],
        entries=entries,
    )
    return Response(feed.xml(), media_type=NAVIGATION, headers=cache_control(private=True))


def update_entry(shown: Shown) -> AtomEntry:
    """An unread new chapter: streamed from here when its page count is known, else through its
    chapter's own feed (which asks for it), as a series feed lists a chapter."""
    update, visit = shown.update, shown.visit
    title = numbered_title(update.number, update.title, update.scanlator, update.language)
    if shown.pages:
        links = [stream_link(visit, update.manga, update.chapter, shown.pages, shown.position)]
    else:
        links = [Link("subsection", visit.url("series", update.manga, update.chapter), ACQUISITION)]
    if shown.file is not None:
        links.append(acquisition_link(shown.file))
    links.append(Link("related", visit.url("series", update.manga), ACQUISITION, "The series"))
    kind = "A new version" if update.kind == "version" else "A new chapter"
    return AtomEntry(
        id=f"urn:toshokan:opds:{visit.slug}:{update.manga}:{update.chapter}",
        title=f"{update.series_title}: {title}",
        updated=when(update.found),
        issued=when(update.date),
        language=update.language,
        content=f"{kind} of {update.series_title} on {visit.config.name}.",
        links=links,
    )


async def updates(request: Request, entry: Entry) -> Response:
    reader = signed_reader(entry)
    urls = entry.urls
    found = await unread_updates(request, entry, reader)
    here = catalogue(urls, UPDATES)
    feed = Feed(
        id="urn:toshokan:opds:updates",
        title="Updates",
        subtitle="New chapters of the series you follow, not read yet, newest first",
        links=[
            Link("self", catalogue(urls, UPDATES, query={"page": str(found.page)}), ACQUISITION),
            Link("start", catalogue(urls), NAVIGATION),
            Link("up", catalogue(urls), NAVIGATION),
            Link("related", catalogue(urls, FOLLOWING), NAVIGATION, "Following"),
            *atom.pages(here, found.page, found.more, ACQUISITION),
        ],
        entries=[update_entry(shown) for shown in found.shown],
        per_page=UPDATES_PER_PAGE,
        start_index=(found.page - 1) * UPDATES_PER_PAGE + 1,
    )
    return Response(feed.xml(), media_type=ACQUISITION, headers=cache_control(private=True))
