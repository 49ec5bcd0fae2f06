"""The HTTP application: the core, its faces, and the middleware in front of them."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware

from toshokan.app import routes
from toshokan.app.accesslog import AccessLogMiddleware
from toshokan.app.caching import CacheControl
from toshokan.app.conditional import ConditionalGetMiddleware
from toshokan.app.cors import CorsMiddleware
from toshokan.app.docs import docs_routes
from toshokan.app.errors import EXCEPTION_HANDLERS
from toshokan.app.guard import InternalErrorMiddleware
from toshokan.app.proxy import TrustedProxyMiddleware
from toshokan.app.ratelimit import RateLimitMiddleware
from toshokan.config import HostSettings
from toshokan.core import ConfigurationError, Core, Host
from toshokan.core.http import source_mounts
from toshokan.core.images import image_mount
from toshokan.core.limits import Limiter
from toshokan.faces import alethia
from toshokan.faces.opds import opds_routes
from toshokan.faces.web import web_routes
from toshokan.models.auth import AUTH_HEADERS


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

    middleware = [Middleware(TrustedProxyMiddleware, trusted=settings.server.trusted_proxies)]
    middleware.append(Middleware(AccessLogMiddleware))
    middleware.append(
        Middleware(
            CorsMiddleware,
            origins=settings.cors.origins,
            tools_origin=settings.cors.tools_origin,
            auth_headers=sorted({h for names in AUTH_HEADERS.values() for h in names}),
        )
    )
    if settings.limits.rate_limit:
        middleware.append(
            Middleware(
                RateLimitMiddleware,
                limiter=Limiter(settings.limits.rate_limit, settings.limits.storage),
            )
        )
    middleware.append(Middleware(ConditionalGetMiddleware))
    middleware.append(Middleware(InternalErrorMiddleware))

    app = Starlette(
        routes=[
            *docs_routes(),
            *web_routes(),
            image_mount(),
            *opds_routes(),
            *alethia.routes(),
            *routes.routes(),
        ],
        middleware=middleware,
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=lifespan,
    )
    app.router.redirect_slashes = False
    app.state.core = core
    app.state.cache_control = CacheControl(settings.cache)
    return app
