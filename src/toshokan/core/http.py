"""What every HTTP face shares with the core: who the caller is, which source it names, the
spec's authenticate exchange, and the sources' own routes.

A face enters the core once per request, with :func:`enter` (or :func:`entry_of` for what
names no source and no reader): the caller, the reader told the face's way, the visit.
The routes an adapter contributes (page images, covers) are mounted by
:func:`source_mounts` behind the host's authorisation: a source that requires
authentication gets every non-public route checked for a valid link signature
or valid credentials before its handler runs, and its answers marked private.
"""

import time
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toshokan.core.answers import Caller
from toshokan.core.bodies import read_json
from toshokan.core.cache_control import NO_STORE
from toshokan.core.hosted import HostedSource
from toshokan.core.passing import AS_SENT, Passing
from toshokan.core.progress.store import device_of
from toshokan.core.readers import Signing, reader_by
from toshokan.core.signing import verify
from toshokan.errors import InvalidCredentials, NotFound
from toshokan.sdk.source import is_public
from toshokan.sdk.urls import Urls

if TYPE_CHECKING:
    from toshokan.core.service import Core
    from toshokan.core.visit import Visit

#: Words under ``/:source`` that name an endpoint taking POST only, never a manga.
POST_ONLY = frozenset({"search", "authenticate"})


def base_url(request: Request, public_url: str | None) -> str:
    """The host's public address: configured, or this request's own origin."""
    if public_url:
        return public_url
    host = request.headers.get("host") or f"{request.url.hostname}:{request.url.port}"
    return f"{request.url.scheme}://{host}"


def client_of(request: Request) -> str:
    """The client's address (the edge has already resolved trusted proxies)."""
    return request.client.host if request.client else "unknown"


def _caller(request: Request, core: "Core") -> Caller:
    return Caller(
        request.headers, base_url(request, core.settings.host.public_url), client_of(request)
    )


@dataclass(frozen=True)
class Entry:
    """A request as every face starts one: the core, who asks, the reader (when the face asked
    for one), the visit to the source it names (when it named one: the request's one upstream
    deadline runs from it) and the host's link builder on the address they reached it at."""

    core: "Core"
    caller: Caller
    #: Who reads, told the face's way; None when the face did not ask.
    reader: str | None = None
    #: A new session token for ``reader``, to set when they signed in with Basic just now.
    session: str | None = None
    visit: "Visit | None" = None
    #: Why the source refused the caller, when the face asked for the visit authorised.
    refused: InvalidCredentials | None = None
    #: The reader's app, as its ``User-Agent`` names it (when a reader was asked for).
    device: str = ""

    @cached_property
    def urls(self) -> Urls:
        return self.core.urls(self.caller)


def entry_of(request: Request) -> Entry:
    """The request's :class:`Entry`, with neither reader nor visit: for what no one source
    answers and no reader owns (a document, a sign-in page)."""
    core: Core = request.app.state.core
    return Entry(core, _caller(request, core))


async def enter(
    request: Request,
    source: str | None = None,
    *,
    signing: Signing | None = None,
    passing: Passing = AS_SENT,
    authorise: bool = False,
) -> Entry:
    """The one way into the core for a request: the caller told; the reader and their app, when
    the face says how its readers sign in (``signing``); the visit to ``source`` (credentials
    passed on the face's way, ``passing``), authorised now when ``authorise`` (else on first
    need), a refusal kept in :attr:`Entry.refused` for the face to answer its way.

    A reader refused is :class:`~toshokan.core.readers.NotAReader` (an ``InvalidCredentials``),
    so a face that answers it otherwise than a locked source can tell the two apart."""
    core: Core = request.app.state.core
    caller = _caller(request, core)
    reader = session = None
    device = ""
    if signing is not None:
        reader, session = await reader_by(signing, core.readers, caller.headers, caller.client)
        device = device_of(caller.headers)
    visit = None if source is None else await core.visit(source, caller, passing)
    refused = None
    if visit is not None and authorise:
        try:
            await visit.access()
        except InvalidCredentials as refusal:
            refused = refusal
    return Entry(core, caller, reader, session, visit, refused, device)


def source_slug(request: Request) -> str:
    """The ``{source}`` of the path; the host's own namespace is never a source."""
    slug: str = request.path_params["source"]
    if slug.startswith("_") or "." in slug:
        # The host's own namespace (docs, page images): never a source.
        raise NotFound(f"Nothing is at {request.url.path[:200]}.")
    return slug


async def visit_of(request: Request, slug: str | None = None) -> "Visit":
    """The way into a source for a request of the spec's shape (``/{source}/...``): the
    source ``slug`` (the path's, unless given) entered (:func:`enter`)."""
    entry = await enter(request, source_slug(request) if slug is None else slug)
    assert entry.visit is not None  # a source was named
    return entry.visit


async def visit_with_body(request: Request) -> tuple["Visit", Any]:
    """:func:`visit_of` for a request that sends a body (a search): the path's namespace
    refused first, then the body read (bounded), then the source entered."""
    slug = source_slug(request)
    body = await read_json(request)
    return await visit_of(request, slug), body


async def authenticate(request: Request) -> Response:
    """Every failure here, an unknown source included, is answered in the spec's failure form
    ``{success: false, error}`` by the exception handlers, which know this endpoint."""
    slug = source_slug(request)
    entry = entry_of(request)
    entry.core.source(slug)
    body = await read_json(request)
    headers = await entry.core.authenticate(slug, body, entry.caller)
    return JSONResponse({"success": True, "headers": headers}, headers={"Cache-Control": NO_STORE})


def source_mounts(core: "Core") -> list[BaseRoute]:
    """Each serving source's own routes under ``/_/<slug>``, guarded when it requires auth."""
    mounts: list[BaseRoute] = []
    for hosted in core.sources.serving():
        mount = hosted.source.mount
        if not mount.routes:
            continue
        if hosted.configuration().auth.required:
            for route in mount.routes:
                if isinstance(route, Route | Mount) and not is_public(route):
                    route.app = _guarded(core, hosted, route.app)
        mounts.append(mount)
    return mounts


def _guarded(core: "Core", hosted: HostedSource, app: ASGIApp) -> ASGIApp:
    secret = core.sources.services.secret

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        expires = request.query_params.get("exp")
        signature = request.query_params.get("sig")
        if expires is not None or signature is not None:
            path = request.url.path
            until = await core.authority.check_link(
                hosted.slug,
                client_of(request),
                lambda: verify(secret, path, expires or "", signature or ""),
            )
            max_age = max(0, min(until - int(time.time()), core.settings.host.link_ttl + 120))
        else:
            visit = await core.visit(hosted.slug, _caller(request, core))
            await visit.access()
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
