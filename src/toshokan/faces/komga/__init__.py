"""A Komga-compatible API at ``/_/komga``: Mihon, Aidoku, Paperback, Tachimanga and Komelia read
every source of the host through it, with each reader's progress kept on the host."""

from toshokan.core.face import AppState, Face
from toshokan.faces.komga.answers import PREFIX
from toshokan.faces.komga.errors import EXCEPTION_HANDLERS
from toshokan.faces.komga.routes import komga_routes

FACE = Face(
    name="komga",
    prefix=PREFIX,
    routes=komga_routes,
    names=frozenset({"komga"}),
    # A reader fetches every page of a chapter, and every cover of a listing, through these.
    image_routes=(
        rf"{PREFIX}/api/v1/books/[^/]+/pages/[^/]+",
        rf"{PREFIX}/api/v1/(series|books)/[^/]+/thumbnail",
    ),
    exception_handlers=EXCEPTION_HANDLERS,
    reads=frozenset({AppState.CORE}),
)

__all__ = ["FACE", "PREFIX"]
