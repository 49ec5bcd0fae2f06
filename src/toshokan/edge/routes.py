"""Which face and route template a request reached: labels for the host's figures.

A request's figures are counted by the route it matched, written as the
route declares it (``/{source}/{manga}/chapters``), never by its concrete
path, which holds slugs and, on signed links, signatures. Starlette leaves
the route it matched in the scope (``scope["route"]``); :class:`RouteLabels`
knows, for every route the faces declared, which face it belongs to and its
whole template, mounts' prefixes included, worked out once when the routes
are registered, so labelling a request is one dictionary lookup.
"""

from collections.abc import Iterable

from starlette.routing import BaseRoute, Mount, Route
from starlette.types import Scope

#: The labels of a request no route answered: no route matched it (404), or the edge
#: answered it before routing (rate limited, too large, a CORS preflight...).
UNROUTED = ("none", "unrouted")
#: Scope key of the labels a request already has (a replayed answer keeps its route's).
LABELS = "toshokan.labels"


class RouteLabels:
    """(face, route template) for every route of the application."""

    def __init__(self) -> None:
        # By identity: routes compare by value, and live as long as the application.
        self._labels: dict[int, tuple[str, str]] = {}

    def add(self, face: str, routes: Iterable[BaseRoute], prefix: str = "") -> None:
        """Label ``routes`` (and the routes of their mounts) as ``face``'s."""
        for route in routes:
            if isinstance(route, Mount):
                inner = route.routes
                if inner:
                    self.add(face, inner, prefix + route.path)
                else:  # an application mounted whole (static files): the mount is the route
                    self._labels[id(route)] = (face, prefix + route.path + "/{path}")
            elif isinstance(route, Route):
                self._labels[id(route)] = (face, prefix + route.path)
            else:
                self._labels[id(route)] = (face, prefix + type(route).__name__)

    def of(self, scope: Scope) -> tuple[str, str]:
        """The labels of a request the application has answered."""
        known: tuple[str, str] | None = scope.get(LABELS)
        if known is not None:
            return known
        route = scope.get("route")
        if route is None:
            return UNROUTED
        return self._labels.get(id(route), UNROUTED)
