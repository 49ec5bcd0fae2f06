"""The Alethia app's dialect, served at ``/_/alethia`` over the same core as the spec's face."""

from toshokan.core.face import Face, Need
from toshokan.faces.alethia.rendered import KEPT
from toshokan.faces.alethia.routes import PREFIX, routes

FACE = Face(
    name="alethia",
    prefix=PREFIX,
    routes=routes,
    names=frozenset({"alethia"}),
    authenticate_routes=(rf"{PREFIX}/[^/]+/authenticate",),
    needs=frozenset({Need.CORE, Need.CACHE_CONTROL}),
    kept=KEPT,
)

__all__ = ["FACE"]
