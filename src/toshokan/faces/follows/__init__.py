"""The follows API at ``/_/follows``: following series, their updates, checks on demand,
notification targets and an Atom feed of updates, over the core's follows.

The web reader uses it (as will other faces' own renderings of follows); every
path and body is in the OpenAPI document (``/openapi.json``).
"""

from toshokan.core.face import AppState, Face
from toshokan.faces.follows.openapi import follows_paths
from toshokan.faces.follows.routes import PREFIX, follows_routes

FACE = Face(
    name="follows",
    prefix=PREFIX,
    routes=follows_routes,
    names=frozenset({"follows"}),
    reads=frozenset({AppState.CORE}),
    openapi=follows_paths,
)

__all__ = ["FACE", "PREFIX"]
