"""The web reader at ``/_/``: a static page over the spec's JSON interface.

The page is plain HTML, CSS and one JavaScript module with no framework, no
build step and nothing fetched from elsewhere, so a host on a LAN with no
internet serves all of it, and changing it means editing the files in
``static/``. Everything it shows comes from the same endpoints reader apps
call (``/``, ``/:source``, search, details, chapters, pages, authenticate), so
validation, authorisation, caching and errors are the core's, once.
"""

from toshokan.core.face import Face
from toshokan.faces.web.address import reader_address
from toshokan.faces.web.routes import ASSETS_PATH, READER_PATH, web_routes

FACE = Face(
    name="web",
    prefix=READER_PATH,
    routes=web_routes,
    # "web" is served by nothing, and kept so no source is taken for the reader.
    names=frozenset({"assets", "web"}),
    image_routes=(f"{ASSETS_PATH}/",),
)

__all__ = ["FACE", "READER_PATH", "reader_address"]
