"""Where the OPDS face lives: ``/_/opds`` (Atom, OPDS 1.2 + PSE) and ``/_/opds/v2`` (JSON)."""

from starlette.routing import BaseRoute, Mount, Route

from toshokan.faces.opds.feeds import PREFIX, atom_routes, root
from toshokan.faces.opds.v2 import v2_routes


def opds_routes() -> list[BaseRoute]:
    """``/_/opds`` itself and everything under it; OPDS 2.0 first, as ``v2`` is no source."""
    return [
        Route(PREFIX, root, methods=["GET"], name="opds"),
        Mount(PREFIX, routes=[*v2_routes(), *atom_routes()]),
    ]
