"""What sources serve themselves through the host: their own routes and signed image links.

A source's own routes (a library's pages, covers and files) are mounted at
``/_/<slug>`` once it has started, and ``/_/image/<slug>`` serves any image
of any source through signed, header-free links. The core builds both and
guards them with the source's authorisation; this face places them. Every
other face links to them, and any name under ``/_/`` that no face takes is a
source's, so the edge budgets those paths as images.
"""

from toshokan.core.face import AppState, Face
from toshokan.core.http import source_mounts
from toshokan.core.images import image_mount

FACE = Face(
    name="sources",
    prefix="/_/",
    routes=lambda: [image_mount()],
    names=frozenset({"image"}),
    started_routes=source_mounts,
    image_routes=(r"/_/image(?:/|$)",),
    reads=frozenset({AppState.CORE}),
)

__all__ = ["FACE"]
