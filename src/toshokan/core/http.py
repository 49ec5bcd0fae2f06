"""What every HTTP face shares with the core: who the caller is, and the sources' own routes.

A face turns a Starlette request into a :class:`Caller` with :func:`caller_of`.
The routes an adapter contributes (page images, covers) are mounted by
:func:`source_mounts` behind the host's authorisation: a source that requires
authentication gets every non-public route checked for a valid link signature
or valid credentials before its handler runs, and its answers marked private.
"""

import time

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toshokan.core.core import Caller, Core
from toshokan.core.signing import verify
from toshokan.core.sources import HostedSource
from toshokan.sdk.source import is_public


def base_url(request: Request, public_url: str | None) -> str:
    """The host's public address: configured, or this request's own origin."""
    if public_url:
        return public_url
    host = request.headers.get("host") or f"{request.url.hostname}:{request.url.port}"
    return f"{request.url.scheme}://{host}"


def client_of(request: Request) -> str:
    """The client's address (the edge has already resolved trusted proxies)."""
    return request.client.host if request.client else "unknown"


def caller_of(request: Request) -> Caller:
    core: Core = request.app.state.core
    return Caller(
        request.headers, base_url(request, core.settings.host.public_url), client_of(request)
    )


def source_mounts(core: Core) -> list[BaseRoute]:
    """Each serving source's own routes under ``/_/<slug>``, guarded when it requires auth."""
    mounts: list[BaseRoute] = []
    for hosted in core.host.serving():
        mount = hosted.source.mount
        if not mount.routes:
            continue
        if hosted.configuration().auth.required:
            for route in mount.routes:
                if isinstance(route, Route | Mount) and not is_public(route):
                    route.app = _guarded(core, hosted, route.app)
        mounts.append(mount)
    return mounts


def _guarded(core: Core, hosted: HostedSource, app: ASGIApp) -> ASGIApp:
    secret = core.host.services.secret

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        expires = request.query_params.get("exp")
        signature = request.query_params.get("sig")
        if expires is not None or signature is not None:
            path = request.url.path
            until = await core.check_link(
                hosted.slug,
                # The image pipeline calls these routes in-process, with no app in the scope.
                client_of(request),
                lambda: verify(secret, path, expires or "", signature or ""),
            )
            max_age = max(0, min(until - int(time.time()), core.settings.host.link_ttl + 120))
        else:
            await core.check_route_access(hosted, caller_of(request))
            max_age = 0
        await app(scope, receive, _private(send, max_age))

    return guarded


def _private(send: Send, max_age: int) -> Send:
    """Answers that needed credentials or a signature are for this client alone."""

    async def marked(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] < 400:
            headers = MutableHeaders(scope=message)
            headers["Cache-Control"] = f"private, max-age={max_age}" if max_age else "no-store"
        await send(message)

    return marked
