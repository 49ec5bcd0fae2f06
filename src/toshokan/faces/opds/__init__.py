"""The OPDS face: an OPDS 1.2 catalogue with page streaming (OPDS-PSE) at ``/_/opds``."""

from toshokan.core.face import AppState, Face
from toshokan.faces.opds import access, freshness
from toshokan.faces.opds.context import PREFIX
from toshokan.faces.opds.routes import opds_routes
from toshokan.models.base import SOURCE_SLUG_REGEX

FACE = Face(
    name="opds",
    prefix=PREFIX,
    routes=opds_routes,
    names=frozenset({"opds"}),
    # Page streaming: a reader fetches every page of a chapter through it.
    image_routes=(rf"{PREFIX}/{SOURCE_SLUG_REGEX}/series/[^/]+/[^/]+/pages/",),
    reads=frozenset({AppState.CORE}),
    cached={**access.CACHED, **freshness.CACHED},
)

__all__ = ["FACE"]
