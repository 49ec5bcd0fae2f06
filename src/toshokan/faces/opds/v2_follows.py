"""The OPDS 2.0 catalogue's pages of a reader's follows, as the Atom catalogue's
(:mod:`toshokan.faces.opds.follows`): *Following*, navigation links to the series feeds, and
*Updates*, the unread new chapters as publications opened through their DiViNa manifests.
"""

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import Urls, with_query
from toshokan.core.http import Entry
from toshokan.faces.opds.chapters import numbered_title
from toshokan.faces.opds.context import signed_reader
from toshokan.faces.opds.followed import UPDATES_PER_PAGE, Shown, followed, unread_updates
from toshokan.faces.opds.follows import FOLLOWING, UPDATES, when
from toshokan.faces.opds.signin import catalogue
from toshokan.faces.opds.v2_documents import (
    DIVINA,
    OPDS_JSON,
    OPEN_ACCESS,
    json_response,
    link,
    pagination,
)
from toshokan.faces.opds.v2_progression import progression_links
from toshokan.faces.opds.v2_series import acquisition


def follows_navigation(urls: Urls) -> list[dict[str, Any]]:
    """The root's links to the reader's follows."""
    return [
        link(catalogue(urls, "v2", UPDATES), title="Updates", rel="subsection"),
        link(catalogue(urls, "v2", FOLLOWING), title="Following", rel="subsection"),
    ]


async def following(request: Request, entry: Entry) -> Response:
    reader = signed_reader(entry)
    urls = entry.urls
    root = catalogue(urls, "v2")
    navigation = []
    for follow in await followed(entry, reader):
        series = follow.followed.series
        title = series.title + (f" ({follow.unread} new)" if follow.unread else "")
        href = catalogue(urls, "v2", series.source, "series", series.manga)
        navigation.append(link(href, title=title, rel="subsection"))
    document = {
        "metadata": {"title": "Following"},
        "links": [
            link(catalogue(urls, "v2", FOLLOWING), rel="self"),
            link(root, rel="start"),
            link(root, rel="up"),
            link(catalogue(urls, "v2", UPDATES), rel="related", title="Updates"),
        ],
        # A feed holds something: with no follows, the way back.
        "navigation": navigation or [link(root, title="You follow no series yet", rel="up")],
    }
    return json_response(document, OPDS_JSON, private=True)


def update_publication(shown: Shown) -> dict[str, Any]:
    update, visit = shown.update, shown.visit
    title = numbered_title(update.number, update.title, update.scanlator, update.language)
    metadata: dict[str, Any] = {
        "title": f"{update.series_title}: {title}",
        "identifier": f"urn:toshokan:{visit.slug}:{update.manga}:{update.chapter}",
        "language": update.language,
        "published": when(update.date),
        "modified": when(update.found),
        "belongsTo": {"series": [{"name": update.series_title, "position": update.number}]},
    }
    manifest = visit.v2_url("series", update.manga, update.chapter, "manifest.json")
    links = [
        link(manifest, DIVINA, rel=OPEN_ACCESS),
        *progression_links(visit, update.manga, update.chapter),
        link(visit.v2_url("series", update.manga), rel="related", title=update.series_title),
    ]
    if shown.file is not None:
        links.append(acquisition(shown.file))
    return {"metadata": metadata, "links": links}


async def updates(request: Request, entry: Entry) -> Response:
    reader = signed_reader(entry)
    urls = entry.urls
    root = catalogue(urls, "v2")
    found = await unread_updates(request, entry, reader)
    here = catalogue(urls, "v2", UPDATES)
    document: dict[str, Any] = {
        "metadata": {
            "title": "Updates",
            "subtitle": "New chapters of the series you follow, not read yet, newest first",
            "itemsPerPage": UPDATES_PER_PAGE,
            "currentPage": found.page,
        },
        "links": [
            link(with_query(here, [("page", str(found.page))]), rel="self"),
            link(root, rel="start"),
            link(root, rel="up"),
            link(catalogue(urls, "v2", FOLLOWING), rel="related", title="Following"),
            *pagination(here, found.page, found.more, []),
        ],
    }
    if found.shown:
        document["publications"] = [update_publication(shown) for shown in found.shown]
    else:  # a feed holds something: the way back
        document["navigation"] = [link(root, title="Nothing new to read", rel="up")]
    return json_response(document, OPDS_JSON, private=True)
