"""The HTTP application: the core, the faces of :data:`toshokan.faces.FACES`, and the edge
in front of them."""

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.types import ASGIApp

from toshokan.config import HostSettings
from toshokan.core import ConfigurationError, Core, Host
from toshokan.core.cache_control import CacheControl
from toshokan.core.face import Face, Need, names_of
from toshokan.edge import Edge
from toshokan.faces import FACES


class EdgedStarlette(Starlette):
    """Starlette with the edge outermost, outside even its own error middleware."""

    def __init__(self, core: Core, faces: Sequence[Face], **options: Any):
        self.core = core
        self.faces = faces
        super().__init__(**options)

    def build_middleware_stack(self) -> ASGIApp:
        core = self.core
        return Edge(
            super().build_middleware_stack(),
            core.settings,
            self.faces,
            core.cache,
            core.cluster.counters,
        )


def create_app(settings: HostSettings, host: Host | None = None) -> Starlette:
    """The ASGI application for ``settings``; adapters start when it starts."""
    faces = FACES
    core = Core(settings, host or Host.from_settings(settings, face_names=names_of(faces)))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            await core.startup()
        except ConfigurationError as error:
            # Kept for the server, which reports it as one line rather than a traceback.
            app.state.startup_error = str(error)
            raise
        # Routes the faces add once the sources started come first: the host's namespace.
        app.router.routes[:0] = [
            route for face in faces if face.started_routes for route in face.started_routes(core)
        ]
        try:
            yield
        finally:
            await core.shutdown()

    app = EdgedStarlette(
        core,
        faces,
        routes=[route for face in faces for route in face.routes()],
        exception_handlers={
            kind: handler for face in faces for kind, handler in face.exception_handlers.items()
        },
        lifespan=lifespan,
    )
    app.router.redirect_slashes = False
    provided = {Need.CORE: core, Need.CACHE_CONTROL: CacheControl(settings.cache)}
    for need in {need for face in faces for need in face.needs}:
        setattr(app.state, need.value, provided[need])
    return app
