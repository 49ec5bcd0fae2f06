"""The HTTP application: routes, error handling and middleware around the sources."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.routing import Mount

from toshokan import __version__
from toshokan.app import authenticate, routes
from toshokan.app.accesslog import AccessLogMiddleware
from toshokan.app.cache import ResultCache
from toshokan.app.conditional import ConditionalGetMiddleware
from toshokan.app.cors import CorsMiddleware
from toshokan.app.docs import install_docs
from toshokan.app.errors import install_error_handlers
from toshokan.app.guard import InternalErrorMiddleware
from toshokan.app.host import ConfigurationError, Host
from toshokan.app.proxy import TrustedProxyMiddleware
from toshokan.app.ratelimit import Limiter, RateLimitMiddleware
from toshokan.app.state import AppState
from toshokan.config import HostSettings
from toshokan.models.auth import AUTH_HEADERS

#: Seconds the host memoises its own manifest, configurations and authorisation answers.
MEMO_SECONDS = 30


def create_app(settings: HostSettings, host: Host | None = None) -> FastAPI:
    """The ASGI application for ``settings``; adapters start when it starts."""
    host = host or Host.from_settings(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            await host.startup()
        except ConfigurationError as error:
            # Kept for the server, which reports it as one line rather than a traceback.
            app.state.startup_error = str(error)
            raise
        try:
            yield
        finally:
            await host.shutdown()

    app = FastAPI(
        title="toshokan",
        version=__version__,
        description="A content host: every source in one JSON interface.",
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
        redirect_slashes=False,
        lifespan=lifespan,
    )
    cache = settings.cache
    app.state.toshokan = AppState(
        settings=settings,
        host=host,
        cache=ResultCache(
            {
                "manifest": MEMO_SECONDS,
                "configuration": MEMO_SECONDS,
                "configuration_body": MEMO_SECONDS,
                "authorization": MEMO_SECONDS,
                "search": cache.search,
                "manga": cache.manga,
                "chapters": cache.chapters,
            },
            cache.max_entries,
        ),
        auth_attempts=Limiter(
            settings.limits.auth_attempts, settings.limits.storage, "toshokan-auth"
        ),
    )
    install_error_handlers(app)
    install_docs(app)
    for hosted in host.serving():
        extra = list(hosted.source.routes())
        if extra:
            app.router.routes.append(Mount(f"/_/{hosted.slug}", routes=extra))
    app.include_router(routes.router)
    app.include_router(authenticate.router)

    # Added innermost first: the last added runs first on a request.
    app.add_middleware(InternalErrorMiddleware)
    app.add_middleware(ConditionalGetMiddleware)
    if settings.limits.rate_limit:
        app.add_middleware(
            RateLimitMiddleware,
            limiter=Limiter(settings.limits.rate_limit, settings.limits.storage),
        )
    app.add_middleware(
        CorsMiddleware,
        origins=settings.cors.origins,
        tools_origin=settings.cors.tools_origin,
        auth_headers=sorted({h for names in AUTH_HEADERS.values() for h in names}),
    )
    app.add_middleware(AccessLogMiddleware)
    app.add_middleware(TrustedProxyMiddleware, trusted=settings.server.trusted_proxies)
    return app
