"""Which budget a request spends, told from its path alone.

Readers fetch one image per page, so page images and covers count against a
budget of their own, larger than the API's: reading a long chapter never
exhausts the budget for searches. Static assets share that budget rather
than the API's. Health checks spend nothing, so a load balancer is never
refused.

Which paths are images comes from the faces (:data:`toshokan.faces.FACES`):
each names its image routes, and any name under ``/_/`` that no face takes
is a source's own, whose routes serve pages, covers and files.
"""

import re
from collections.abc import Iterable
from enum import Enum

from toshokan.core.face import Face, names_of


class Budget(Enum):
    REQUESTS = "requests"
    IMAGES = "images"
    EXEMPT = "exempt"


_HEALTH = re.compile(r"/[a-z]+/health/?")


class PathBudgets:
    """The budget of each path, for one list of faces."""

    def __init__(self, faces: Iterable[Face]):
        faces = list(faces)
        taken = "|".join(re.escape(name) for name in sorted(names_of(faces)))
        routes = [route for face in faces for route in face.image_routes]
        routes.append(rf"/_/(?!(?:{taken})/)[a-z]+/")  # a source's own routes
        self._image = re.compile("|".join(f"(?:{route})" for route in routes))

    def of(self, path: str) -> Budget:
        if path.startswith("/_/"):
            return Budget.IMAGES if self._image.match(path) else Budget.REQUESTS
        if path.endswith(("/health", "/health/")) and _HEALTH.fullmatch(path):
            return Budget.EXEMPT
        return Budget.REQUESTS
