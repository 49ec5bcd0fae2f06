"""The host's figures for Prometheus, at ``/_/metrics``.

What is counted is :mod:`toshokan.core.metrics`'s; this face only serves it,
in Prometheus' text format, uncached and outside every rate-limit budget (a
scraper asks on a schedule). The figures tell nothing a client sent (no
path, slug or credential), but they do tell how the host is used: operators
restrict the path at their proxy, or turn the figures off (``[metrics]
enabled = false``, and the path answers 404).
"""

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from toshokan.core.cache_control import NO_STORE_HEADERS
from toshokan.core.face import AppState, Face
from toshokan.errors import error_body

PATH = "/_/metrics"


async def metrics(request: Request) -> Response:
    figures = request.app.state.metrics
    if figures is None:
        return JSONResponse(
            error_body("NOT_FOUND", "This host keeps no figures ([metrics] enabled = false)."),
            status_code=404,
            headers=NO_STORE_HEADERS,
        )
    return Response(
        # Several workers' figures are read from their files: off the event loop.
        await asyncio.to_thread(figures.exposition),
        media_type=figures.content_type,
        headers=NO_STORE_HEADERS,
    )


def metrics_routes() -> list[BaseRoute]:
    return [Route(PATH, metrics, methods=["GET"])]


FACE = Face(
    name="metrics",
    prefix=PATH,
    routes=metrics_routes,
    names=frozenset({"metrics"}),
    unbudgeted_routes=(PATH,),
    reads=frozenset({AppState.METRICS}),
)

__all__ = ["FACE", "PATH"]
