"""Routes of the OPDS 2.0 catalogue, under ``/_/opds/v2``: every document with validators
(:mod:`toshokan.faces.opds.freshness`), the progressions and the reader's follows excepted."""

from starlette.routing import BaseRoute, Route

from toshokan.faces.opds import v2_follows, v2_lists, v2_progression, v2_series
from toshokan.faces.opds.context import signed_in, source_route
from toshokan.faces.opds.follows import FOLLOWING, UPDATES
from toshokan.faces.opds.freshness import validated


def v2_routes() -> list[BaseRoute]:
    """Routes under ``/_/opds``: ``/v2`` and below."""
    source = "/v2/{source}"
    series_path = f"{source}/series/{{manga}}"
    return [
        Route("/v2", signed_in(validated(v2_lists.root)), methods=["GET"]),
        # Before ``/v2/{source}``, which would take the word for a source.
        Route("/v2/_search", signed_in(validated(v2_lists.root_search)), methods=["GET"]),
        Route(f"/v2/{FOLLOWING}", signed_in(v2_follows.following), methods=["GET"]),
        Route(f"/v2/{UPDATES}", signed_in(v2_follows.updates), methods=["GET"]),
        Route(source, source_route(validated(v2_lists.source_root)), methods=["GET"]),
        Route(f"{source}/all", source_route(validated(v2_lists.all_titles)), methods=["GET"]),
        Route(
            f"{source}/presets/{{number}}",
            source_route(validated(v2_lists.preset)),
            methods=["GET"],
        ),
        Route(f"{source}/search", source_route(validated(v2_lists.search)), methods=["GET"]),
        Route(series_path, source_route(validated(v2_series.series)), methods=["GET"]),
        Route(
            f"{series_path}/{{chapter}}/manifest.json",
            source_route(validated(v2_series.manifest)),
            methods=["GET"],
        ),
        Route(
            f"{series_path}/{{chapter}}/progression",
            source_route(v2_progression.opds_progression),
            methods=["GET", "PUT"],
        ),
        Route(
            f"{series_path}/{{chapter}}/readium-progression",
            source_route(v2_progression.readium_progression),
            methods=["GET", "PUT"],
        ),
    ]
