"""The spec's JSON interface at ``/``, with its OpenAPI document and Swagger UI docs at ``/_/docs``."""

from toshokan.core.face import AppState, Face
from toshokan.faces.spec.docs import DOCS_ASSETS_ROUTE, docs_routes
from toshokan.faces.spec.errors import EXCEPTION_HANDLERS
from toshokan.faces.spec.routes import AUTHENTICATE_ROUTE, routes

FACE = Face(
    name="spec",
    prefix="/",
    # The docs first: the interface's ``/{source}/{manga}`` would match ``/_/docs``.
    routes=lambda: [*docs_routes(), *routes()],
    names=frozenset({"docs"}),
    image_routes=(DOCS_ASSETS_ROUTE,),
    authenticate_routes=(AUTHENTICATE_ROUTE,),
    exception_handlers=EXCEPTION_HANDLERS,
    reads=frozenset({AppState.CORE, AppState.CACHE_CONTROL}),
)

__all__ = ["FACE"]
