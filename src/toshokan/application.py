"""The HTTP application: the core, the faces of :data:`toshokan.faces.FACES`, and the edge
in front of them."""

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toshokan.config import HostSettings
from toshokan.core import ConfigurationError, Core, HostedSources
from toshokan.core.cache_control import CacheControl
from toshokan.core.face import AppState, Face, cached_by, exception_handlers, names_of
from toshokan.core.metrics import HostMetrics
from toshokan.edge import Edge
from toshokan.edge.routes import RouteLabels
from toshokan.faces import FACES


class EdgedStarlette(Starlette):
    """Starlette with the edge outermost, outside even its own error middleware."""

    def __init__(
        self,
        core: Core,
        faces: Sequence[Face],
        metrics: HostMetrics | None,
        labels: RouteLabels,
        **options: Any,
    ):
        self.core = core
        self.faces = faces
        self.metrics = metrics
        self.labels = labels
        super().__init__(**options)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.edge()(scope, receive, send)

    def edge(self) -> ASGIApp:
        """The application as a server calls it: the edge, which hands Starlette what it does
        not answer itself. Served as it is (:func:`toshokan.serving.served_app`), a request
        the edge answers (a replayed one) passes no layer of Starlette's own."""
        if self.middleware_stack is None:
            self.middleware_stack = self.build_middleware_stack()
        return self.middleware_stack

    def build_middleware_stack(self) -> ASGIApp:
        core = self.core
        return Edge(
            self._behind_the_edge(super().build_middleware_stack()),
            core.settings,
            self.faces,
            core.cache,
            core.cluster.counters,
            metrics=self.metrics,
            labels=self.labels,
        )

    def _behind_the_edge(self, stack: ASGIApp) -> ASGIApp:
        """Starlette's own call, inlined. A configuration error at start-up goes to the server
        as one line for the operator (Starlette's message is the whole traceback)."""

        async def starlette(scope: Scope, receive: Receive, send: Send) -> None:
            scope["app"] = self
            if scope["type"] == "lifespan":
                send = self._plain_startup_errors(send)
            await stack(scope, receive, send)

        return starlette

    def _plain_startup_errors(self, send: Send) -> Send:
        async def send_plain(message: Message) -> None:
            problem = getattr(self.state, "startup_error", None)
            if message["type"] == "lifespan.startup.failed" and problem:
                message = {**message, "message": f"toshokan: configuration error: {problem}"}
            await send(message)

        return send_plain


def create_app(settings: HostSettings, sources: HostedSources | None = None) -> EdgedStarlette:
    """The ASGI application for ``settings``; adapters start when it starts."""
    faces = FACES
    sources = sources or HostedSources.from_settings(settings, face_names=names_of(faces))
    core = Core(settings, sources, cached_by(faces))
    metrics = HostMetrics() if settings.metrics.enabled else None
    if metrics is not None:
        metrics.observe(core.cache, core.sources.services.observers)
        metrics.observe_follows(core.follows.rounds)
        metrics.observe_downloads(core.downloads.runner)
    # Each request's figures are counted by its face and route template.
    labels = RouteLabels()
    routes: list[BaseRoute] = []
    for face in faces:
        own = face.routes()
        labels.add(face.name, own)
        routes += own

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            await core.startup()
        except ConfigurationError as error:
            # Kept for the server, which reports it as one line rather than a traceback.
            app.state.startup_error = str(error)
            raise
        # Routes the faces add once the sources started come first: the host's namespace.
        started: list[BaseRoute] = []
        for face in faces:
            if face.started_routes:
                own = face.started_routes(core)
                labels.add(face.name, own)
                started += own
        app.router.routes[:0] = started
        try:
            yield
        finally:
            await core.shutdown()

    app = EdgedStarlette(
        core,
        faces,
        metrics,
        labels,
        routes=routes,
        exception_handlers=exception_handlers(faces),
        lifespan=lifespan,
    )
    app.router.redirect_slashes = False
    provided = {
        AppState.CORE: core,
        AppState.CACHE_CONTROL: CacheControl(settings.cache),
        AppState.METRICS: metrics,
    }
    for part in {part for face in faces for part in face.reads}:
        setattr(app.state, part.value, provided[part])
    return app
