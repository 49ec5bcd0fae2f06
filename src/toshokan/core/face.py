"""What a face declares to the application: one object, so the house is assembled from one list.

A face is a package under :mod:`toshokan.faces` that exports a :class:`Face`.
The application builds its router from the faces' routes, in the list's
order; the core refuses a source slug that a face's name under ``/_/``
would collide with; the edge budgets the paths a face names as image routes
against the image budget, and spends none on its probes. Each of them reads the same list
(:data:`toshokan.faces.FACES`), so a new face is one package and one entry.
"""

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from starlette.routing import BaseRoute

from toshokan.config import HostSettings
from toshokan.core.cache import Kind

if TYPE_CHECKING:
    from toshokan.core.service import Core


class AppState(Enum):
    """The parts of the application's state a face's handlers read on each request (the
    application sets only those some face reads)."""

    #: The core (``request.app.state.core``): sources, answers, authorisation, images.
    CORE = "core"
    #: The Cache-Control values of ``[cache]`` (``request.app.state.cache_control``).
    CACHE_CONTROL = "cache_control"
    #: The host's figures (``request.app.state.metrics``), None when ``[metrics]`` disables them.
    METRICS = "metrics"


@dataclass(frozen=True)
class Face:
    """One face: where it lives, its routes, what the edge counts as images, what it reads."""

    #: The face's name, as the README and log lines call it.
    name: str
    #: Where its routes live: ``/`` for the spec's interface, ``/_/<name>`` for the others.
    prefix: str
    #: Its routes, built once when the application is.
    routes: Callable[[], Sequence[BaseRoute]]
    #: The names it takes directly under ``/_/``: no source may have one of them as its slug,
    #: since a source's own routes are mounted at ``/_/<slug>``.
    names: frozenset[str] = frozenset()
    #: Routes it adds once the sources have started (their own mounts), ahead of all others.
    started_routes: "Callable[[Core], Sequence[BaseRoute]] | None" = None
    #: Patterns (regular expressions matched at the start of the path) of its image and
    #: static-file routes, which spend the image budget rather than the API's.
    image_routes: tuple[str, ...] = ()
    #: Patterns (matched whole) of routes that spend no budget at all: probes a load balancer or
    #: a metrics scraper sends on a schedule, which a rate limit must never refuse.
    unbudgeted_routes: tuple[str, ...] = ()
    #: Patterns (matched whole) of its routes that sign a client in: their failures, the
    #: edge's refusals included, take the authenticate endpoint's form ``{success: false, error}``.
    authenticate_routes: tuple[str, ...] = ()
    #: Handlers for exceptions its routes raise: for paths under its prefix (see
    #: :func:`exception_handlers`); the face at ``/`` handles what no other face does, and
    #: what a face's handler leaves to it by answering None.
    exception_handlers: Mapping[Any, Callable[..., Any]] = field(default_factory=dict)
    #: What its handlers read from the application's state.
    reads: frozenset[AppState] = frozenset()
    #: A line ``toshokan serve`` prints at start-up (where a person opens the face), so the
    #: command names no face of its own.
    announce: Callable[[HostSettings], str] | None = None
    #: What it keeps through the core's cache (rendered answers, sessions), by kind: one cache
    #: for the whole host, so a shared store replaces it in one place.
    cached: Mapping[str, Kind] = field(default_factory=dict)
    #: The paths it adds to the host's OpenAPI document (the host's own JSON endpoints).
    openapi: Callable[[], Mapping[str, Any]] | None = None


def cached_by(faces: Iterable[Face]) -> dict[str, Kind]:
    """Every kind the faces keep through the core's cache."""
    return {name: kind for face in faces for name, kind in face.cached.items()}


def names_of(faces: Iterable[Face]) -> frozenset[str]:
    """Every name the faces take under ``/_/``; the core refuses them as source slugs."""
    return frozenset(name for face in faces for name in face.names)


Handler = Callable[[Any, Exception], Any]


def exception_handlers(faces: Iterable[Face]) -> dict[Any, Handler]:
    """One handler per exception kind any face handles, which hands the failure to the face
    whose prefix the request's path is under (the longest, so ``/_/komga`` before ``/``);
    where that face handles no such failure, or its handler answers None, to the face at
    ``/``. Starlette's handlers are application-wide: this keeps each face's failures in its
    own shape."""
    ordered = sorted(faces, key=lambda face: len(face.prefix.rstrip("/")), reverse=True)
    kinds = {kind for face in ordered for kind in face.exception_handlers}
    return {kind: _dispatching(kind, ordered) for kind in kinds}


def _dispatching(kind: Any, ordered: Sequence[Face]) -> Handler:
    owners = [
        (face.prefix.rstrip("/"), face.exception_handlers[kind])
        for face in ordered
        if kind in face.exception_handlers
    ]

    async def handler(request: Any, error: Exception) -> Any:
        path: str = request.url.path
        chosen = [
            handle
            for prefix, handle in owners
            if not prefix or path == prefix or path.startswith(prefix + "/")
        ]
        answer = None
        for handle in chosen or [owners[-1][1]]:
            answer = handle(request, error)
            answer = await answer if inspect.isawaitable(answer) else answer
            if answer is not None:
                break
        return answer

    return handler
