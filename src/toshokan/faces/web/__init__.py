"""The web reader at ``/_/``: a static page over the spec's JSON interface.

The page is plain HTML, CSS and a few JavaScript modules (one per view, and
what they share) with no framework, no build step and nothing fetched from
elsewhere, so a host on a LAN with no internet serves all of it, and changing
it means editing the files in ``static/``. Everything it shows comes from the same endpoints reader apps
call (``/``, ``/:source``, search, details, chapters, pages, authenticate), so
validation, authorisation, caching and errors are the core's, once. Only who is
reading and where they are come from the face's own endpoints under ``/_/web``,
over the core's readers and progress store, so a place follows the reader from
one browser to the next.
"""

from toshokan.core.face import AppState, Face
from toshokan.faces.web.address import reader_address
from toshokan.faces.web.routes import ASSETS_PATH, READER_PATH, web_routes

FACE = Face(
    name="web",
    prefix=READER_PATH,
    routes=web_routes,
    # "web" holds the reader's own endpoints: its session and each reader's place.
    names=frozenset({"assets", "web"}),
    image_routes=(f"{ASSETS_PATH}/",),
    reads=frozenset({AppState.CORE}),
    announce=lambda settings: f"web reader at {reader_address(settings)}",
)

__all__ = ["FACE", "READER_PATH", "reader_address"]
