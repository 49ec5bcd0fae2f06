"""What the edge tells from a request's path alone: the budget it spends, whether it can
reach a route at all, and the form its failures take (each face names its sign-in routes).

Readers fetch one image per page, so page images and covers count against a
budget of their own, larger than the API's: reading a long chapter never
exhausts the budget for searches. Static assets share that budget rather
than the API's. Health checks and the routes faces declare unbudgeted
(readiness, metrics) spend nothing, so a load balancer or a scraper is never
refused.

Which paths are images comes from the faces (:data:`toshokan.faces.FACES`):
each names its image routes, and any name under ``/_/`` that no face takes
is a source's own, whose routes serve pages, covers and files.
"""

import re
from collections.abc import Iterable
from enum import StrEnum

from toshokan.core.face import Face, names_of
from toshokan.models.base import SOURCE_SLUG_REGEX


class BudgetKind(StrEnum):
    """A str's hash, not Enum's own (a Python call): the edge looks a replayed answer's up."""

    REQUESTS = "requests"
    IMAGES = "images"
    EXEMPT = "exempt"


_HEALTH = re.compile(rf"/{SOURCE_SLUG_REGEX}/health/?")


class PathBudgets:
    """The budget of each path, for one list of faces."""

    def __init__(self, faces: Iterable[Face]):
        faces = list(faces)
        taken = "|".join(re.escape(name) for name in sorted(names_of(faces)))
        routes = [route for face in faces for route in face.image_routes]
        routes.append(rf"/_/(?!(?:{taken})/){SOURCE_SLUG_REGEX}/")  # a source's own routes
        self._image = re.compile("|".join(f"(?:{route})" for route in routes))
        unbudgeted = [route for face in faces for route in face.unbudgeted_routes]
        self._unbudgeted = (
            re.compile("|".join(f"(?:{route})" for route in unbudgeted)) if unbudgeted else None
        )
        signing_in = [route for face in faces for route in face.authenticate_routes]
        self._authenticate = (
            re.compile("|".join(f"(?:{route})" for route in signing_in)) if signing_in else None
        )

    def of(self, path: str) -> BudgetKind:
        if path.startswith("/_/"):
            if self._unbudgeted is not None and self._unbudgeted.fullmatch(path):
                return BudgetKind.EXEMPT
            return BudgetKind.IMAGES if self._image.match(path) else BudgetKind.REQUESTS
        if path.endswith(("/health", "/health/")) and _HEALTH.fullmatch(path):
            return BudgetKind.EXEMPT
        return BudgetKind.REQUESTS

    def answers_auth_failures(self, method: str, path: str) -> bool:
        """Whether failures here take the authenticate endpoint's form, ``{success: false,
        error}``: a POST to a route a face names as signing clients in."""
        return (
            method == "POST"
            and self._authenticate is not None
            and self._authenticate.fullmatch(path) is not None
        )


def reaches_no_route(path: str) -> bool:
    """A path ending in a line feed matches no route exactly.

    Starlette anchors its route patterns with ``$``, which also matches just
    before a final newline: ``/_/opds%0A`` would reach the OPDS catalogue.
    Refusing such paths here, in front of every router, keeps every route of
    every face exact, including those added later.
    """
    return path.endswith("\n")
