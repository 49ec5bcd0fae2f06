"""The Alethia app's dialect, served at ``/_/alethia`` over the same core as the spec's face."""

from toshokan.core.face import AppState, Face
from toshokan.faces.alethia.rendered import CACHED
from toshokan.faces.alethia.routes import PREFIX, routes

FACE = Face(
    name="alethia",
    prefix=PREFIX,
    routes=routes,
    names=frozenset({"alethia"}),
    authenticate_routes=(rf"{PREFIX}/[^/]+/authenticate",),
    reads=frozenset({AppState.CORE, AppState.CACHE_CONTROL}),
    cached=CACHED,
)

__all__ = ["FACE"]
