"""The downloads API at ``/_/downloads``: the download queue that keeps followed series, as
each reader (their own) and an operator (all of it) sees and steers it.

The web reader's Downloads page uses it; every path and body is in the OpenAPI
document (``/openapi.json``). Keeping a series is the follows API's
(``/_/follows/series/{source}/{manga}/keep``).
"""

from toshokan.core.face import AppState, Face
from toshokan.faces.downloads.openapi import downloads_paths
from toshokan.faces.downloads.routes import PREFIX, downloads_routes

FACE = Face(
    name="downloads",
    prefix=PREFIX,
    routes=downloads_routes,
    names=frozenset({"downloads"}),
    reads=frozenset({AppState.CORE}),
    openapi=downloads_paths,
)

__all__ = ["FACE", "PREFIX"]
