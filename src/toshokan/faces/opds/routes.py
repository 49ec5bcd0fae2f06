"""Where the OPDS face lives: ``/_/opds`` (Atom, OPDS 1.2 + PSE) and ``/_/opds/v2`` (JSON).

The Atom catalogue a reader walks::

    /_/opds                                   every serving source (navigation)
    /_/opds/_search?q=                        one search over every source
    /_/opds/_following                        the series the reader follows (navigation)
    /_/opds/_updates?page=                    their unread new chapters (acquisition, PSE)
    /_/opds/<slug>                            a source: all titles, its presets
    /_/opds/<slug>/all?sort=&page=            all titles, a facet per declared sort
    /_/opds/<slug>/presets/<n>?page=          one preset's search
    /_/opds/<slug>/search?q=&page=            the source's search
    /_/opds/<slug>/series/<manga>?page=       a series: its details, then its chapters
    /_/opds/<slug>/series/<manga>/<chapter>   a chapter with its OPDS-PSE stream link
                                              (and its file, when the source offers it)
    /_/opds/<slug>/series/<manga>/<chapter>/pages/<n>?maxWidth=   one page image, 0-based

with an OpenSearch description at ``opensearch.xml`` beside the root and each
source; the same walk in JSON under ``/_/opds/v2``. Every answer comes from
the core (search, details, chapters, pages) and every image from the core's
image pipeline, so this face validates, caches and authorises nothing itself.
"""

from collections.abc import Callable
from typing import Any

from starlette.routing import BaseRoute, Mount, Route

from toshokan.faces.opds import catalogue, follows, lists, pages, series
from toshokan.faces.opds.context import PREFIX, authentication, signed_in, source_route
from toshokan.faces.opds.freshness import validated
from toshokan.faces.opds.signin import DOCUMENT_PATH
from toshokan.faces.opds.v2_routes import v2_routes


def atom_routes() -> list[BaseRoute]:
    """Routes under ``/_/opds`` of the Atom catalogue."""
    source = "/{source}"
    series_path = f"{source}/series/{{manga}}"

    def get(path: str, endpoint: Callable[..., Any]) -> Route:
        return Route(path, endpoint, methods=["GET"])

    # Every feed and description carries validators (``freshness``); page images have their own.
    return [
        get("/", signed_in(validated(catalogue.root))),
        get(f"/{DOCUMENT_PATH}", authentication),
        get("/opensearch.xml", signed_in(validated(catalogue.root_opensearch))),
        get("/_search", signed_in(validated(catalogue.root_search))),
        get(f"/{follows.FOLLOWING}", signed_in(follows.following)),
        get(f"/{follows.UPDATES}", signed_in(follows.updates)),
        get(source, source_route(validated(catalogue.source_root))),
        get(f"{source}/opensearch.xml", source_route(validated(catalogue.source_opensearch))),
        get(f"{source}/all", source_route(validated(lists.all_titles))),
        get(f"{source}/presets/{{number}}", source_route(validated(lists.preset))),
        get(f"{source}/search", source_route(validated(lists.source_search))),
        get(series_path, source_route(validated(series.series))),
        get(f"{series_path}/{{chapter}}", source_route(validated(series.chapter_feed))),
        get(f"{series_path}/{{chapter}}/pages/{{number}}", source_route(pages.page_image)),
    ]


def opds_routes() -> list[BaseRoute]:
    """``/_/opds`` itself and everything under it; OPDS 2.0 first, as ``v2`` is no source."""
    return [
        Route(PREFIX, signed_in(validated(catalogue.root)), methods=["GET"], name="opds"),
        Mount(PREFIX, routes=[*v2_routes(), *atom_routes()]),
    ]
