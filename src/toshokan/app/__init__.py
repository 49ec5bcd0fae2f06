"""The HTTP application: the core, its faces, and the edge in front of them."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.types import ASGIApp

from toshokan.app import routes
from toshokan.app.caching import CacheControl
from toshokan.app.docs import docs_routes
from toshokan.app.errors import EXCEPTION_HANDLERS
from toshokan.config import HostSettings
from toshokan.core import ConfigurationError, Core, Host
from toshokan.core.http import source_mounts
from toshokan.core.images import image_mount
from toshokan.edge import Edge
from toshokan.faces import alethia
from toshokan.faces.kosync import kosync_routes
from toshokan.faces.opds import opds_routes
from toshokan.faces.web import web_routes


class EdgedStarlette(Starlette):
    """Starlette with the edge outermost, outside even its own error middleware."""

    def build_middleware_stack(self) -> ASGIApp:
        core: Core = self.state.core
        return Edge(super().build_middleware_stack(), core.settings, core.cache)


def create_app(settings: HostSettings, host: Host | None = None) -> Starlette:
    """The ASGI application for ``settings``; adapters start when it starts."""
    core = Core(settings, host or Host.from_settings(settings))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            await core.startup()
        except ConfigurationError as error:
            # Kept for the server, which reports it as one line rather than a traceback.
            app.state.startup_error = str(error)
            raise
        # The sources' own routes exist once they started; the host's namespace comes first.
        app.router.routes[:0] = source_mounts(core)
        try:
            yield
        finally:
            await core.shutdown()

    app = EdgedStarlette(
        routes=[
            *docs_routes(),
            *web_routes(),
            image_mount(),
            *opds_routes(),
            *alethia.routes(),
            *kosync_routes(),
            *routes.routes(),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=lifespan,
    )
    app.router.redirect_slashes = False
    app.state.core = core
    app.state.cache_control = CacheControl(settings.cache)
    return app
