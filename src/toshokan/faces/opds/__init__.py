"""The OPDS face: an OPDS 1.2 catalogue with page streaming (OPDS-PSE) at ``/_/opds``."""

from toshokan.core.face import Face, Need
from toshokan.faces.opds.access import KEPT
from toshokan.faces.opds.context import PREFIX
from toshokan.faces.opds.freshness import KEPT as VALIDATORS
from toshokan.faces.opds.routes import opds_routes

FACE = Face(
    name="opds",
    prefix=PREFIX,
    routes=opds_routes,
    names=frozenset({"opds"}),
    # Page streaming: a reader fetches every page of a chapter through it.
    image_routes=(rf"{PREFIX}/[a-z]+/series/[^/]+/[^/]+/pages/",),
    needs=frozenset({Need.CORE}),
    kept={**KEPT, **VALIDATORS},
)

__all__ = ["FACE"]
