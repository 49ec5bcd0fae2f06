"""The nine endpoints of the content host specification."""

import asyncio
import hashlib
import json
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import TypeAdapter

from toshokan.app.caching import NO_STORE, cache_control
from toshokan.app.host import HostedSource
from toshokan.app.search_validation import parse_search
from toshokan.app.state import app_state, base_url
from toshokan.errors import (
    ChapterNotFound,
    HostError,
    InvalidCredentials,
    InvalidRequest,
    MangaNotFound,
    MethodNotAllowed,
    NotFound,
    SourceNotFound,
)
from toshokan.models import (
    Chapter,
    Health,
    HostManifest,
    Manga,
    Ping,
    SearchResponse,
    SourceConfiguration,
)
from toshokan.models.base import SLUG_PATTERN, SOURCE_SLUG_PATTERN
from toshokan.models.content import newest_first
from toshokan.sdk.auth import auth_headers_from, credentials_from_headers
from toshokan.sdk.context import RequestContext

T = TypeVar("T")
router = APIRouter()
CHAPTER_LIST = TypeAdapter(list[Chapter])
PAGE_LIST = TypeAdapter(list[str])
HEALTH_BODY = Health().model_dump_json().encode()
_SLUG = re.compile(SLUG_PATTERN)
_SOURCE = re.compile(SOURCE_SLUG_PATTERN)
POST_ONLY = frozenset({"search", "authenticate"})


def json_response(body: bytes, cache: str, status: int = 200) -> Response:
    return Response(
        body, status_code=status, media_type="application/json", headers={"Cache-Control": cache}
    )


def source_for(request: Request, slug: str) -> HostedSource:
    if not _SOURCE.fullmatch(slug):
        if slug.startswith("_") or "." in slug:
            # The host's own namespace (docs, page images): never a source.
            raise NotFound(f"Nothing is at {request.url.path}.")
        raise SourceNotFound(f"No source has the slug {slug!r}.")
    return app_state(request).host.get(slug)


def check_slug(slug: str, not_found: type[HostError]) -> None:
    # Anything outside the slug alphabet cannot exist; it never reaches an adapter.
    if not _SLUG.fullmatch(slug):
        raise not_found(f"{not_found.default_message.rstrip('.')}: {slug!r} is not a valid slug.")


def configuration_of(request: Request, hosted: HostedSource) -> Awaitable[SourceConfiguration]:
    async def compute() -> SourceConfiguration:
        return hosted.configuration()

    # Short server-side memo: a library's tags change while it runs, so never for long.
    return app_state(request).cache.get_or_compute("configuration", hosted.slug, compute)


def fingerprint(headers: dict[str, str]) -> str:
    return (
        hashlib.sha256(json.dumps(sorted(headers.items())).encode()).hexdigest() if headers else ""
    )


async def request_context(request: Request, hosted: HostedSource) -> tuple[RequestContext, str]:
    """Authorise the request when the source requires it; return its context and auth fingerprint.

    Cached answers are keyed by both: what an adapter returns may depend on the
    credentials and, for links back to the host, on the address it was reached at.
    """
    config = await configuration_of(request, hosted)
    auth = auth_headers_from(config.auth.type, request.headers)
    key = fingerprint(auth)
    if config.auth.required:
        credentials = credentials_from_headers(config.auth.type, request.headers)

        async def decide() -> bool:
            return bool(auth) and await hosted.source.authorize(auth, credentials)

        allowed = await app_state(request).cache.get_or_compute(
            "authorization", (hosted.slug, key), decide
        )
        if not allowed:
            raise InvalidCredentials(
                "This source requires authentication: send the headers POST "
                f"/{hosted.slug}/authenticate returned."
                if not auth
                else "The authentication headers were not accepted; authenticate again."
            )
    return RequestContext(base_url=base_url(request), auth=auth), key


async def cached(request: Request, kind: str, key: Any, compute: Callable[[], Awaitable[T]]) -> T:
    return await app_state(request).cache.get_or_compute(kind, key, compute)


@router.get("/", response_model=HostManifest, summary="Host manifest")
async def manifest(request: Request) -> Response:
    state = app_state(request)

    async def serialise() -> bytes:
        return state.host.manifest().model_dump_json().encode()

    body = await cached(request, "manifest", "", serialise)
    return json_response(body, cache_control(state.settings.cache, "configuration"))


@router.get("/{source}", response_model=SourceConfiguration, summary="Source configuration")
async def source_configuration(request: Request, source: str) -> Response:
    hosted = source_for(request, source)
    config = await configuration_of(request, hosted)

    async def serialise() -> bytes:
        return config.model_dump_json(exclude_none=True).encode()

    # Keyed by the hash, so the bytes follow the configuration the moment it changes.
    body = await cached(request, "configuration_body", (source, config.hash), serialise)
    return json_response(body, cache_control(app_state(request).settings.cache, "configuration"))


@router.get("/{source}/health", response_model=Health, summary="Source health")
async def health(request: Request, source: str) -> Response:
    source_for(request, source)
    return json_response(HEALTH_BODY, NO_STORE)


@router.get("/{source}/ping", response_model=Ping, summary="Upstream connectivity")
async def ping(request: Request, source: str) -> Response:
    hosted = source_for(request, source)
    deadline = app_state(request).settings.server.upstream_timeout
    started = time.perf_counter()
    try:
        await asyncio.wait_for(hosted.source.ping(), timeout=deadline)
        result = Ping(status="ok", latencyMs=0)
    except TimeoutError:
        result = Ping(status="down", latencyMs=0, error=f"No answer within {deadline:g} s.")
    except HostError as error:
        result = Ping(status="down", latencyMs=0, error=error.message)
    except Exception as error:  # ping reports failure; it must not become one
        result = Ping(
            status="down", latencyMs=0, error=f"{type(error).__name__}: the upstream check failed."
        )
    result.latencyMs = round((time.perf_counter() - started) * 1000, 2)
    return json_response(result.model_dump_json(exclude_none=True).encode(), NO_STORE)


@router.post(
    "/{source}/search",
    response_model=SearchResponse,
    summary="Search",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/SearchRequest"}}
            },
        }
    },
)
async def search(request: Request, source: str) -> Response:
    hosted = source_for(request, source)
    body = await read_json(request)
    config = await configuration_of(request, hosted)
    search_request = parse_search(body, config.search)
    ctx, key = await request_context(request, hosted)

    async def compute() -> bytes:
        result = await hosted.source.search(search_request, ctx)
        result.page = search_request.page
        return result.model_dump_json().encode()

    cache_key = (source, search_request.model_dump_json(), key, ctx.base_url)
    payload = await cached(request, "search", cache_key, compute)
    return json_response(
        payload, cache_control(app_state(request).settings.cache, "search", private=bool(key))
    )


@router.get("/{source}/{manga_slug}", response_model=Manga, summary="Manga details")
async def manga(request: Request, source: str, manga_slug: str) -> Response:
    hosted = source_for(request, source)
    if manga_slug in POST_ONLY:
        raise MethodNotAllowed(f"/{source}/{manga_slug} accepts POST only.")
    check_slug(manga_slug, MangaNotFound)
    ctx, key = await request_context(request, hosted)

    async def compute() -> bytes:
        return (await hosted.source.manga(manga_slug, ctx)).model_dump_json().encode()

    payload = await cached(request, "manga", (source, manga_slug, key, ctx.base_url), compute)
    return json_response(
        payload, cache_control(app_state(request).settings.cache, "manga", private=bool(key))
    )


@router.get("/{source}/{manga_slug}/chapters", response_model=list[Chapter], summary="Chapter list")
async def chapters(request: Request, source: str, manga_slug: str) -> Response:
    hosted = source_for(request, source)
    check_slug(manga_slug, MangaNotFound)
    ctx, key = await request_context(request, hosted)

    async def compute() -> bytes:
        found = await hosted.source.chapters(manga_slug, ctx)
        return CHAPTER_LIST.dump_json(newest_first(found))

    payload = await cached(request, "chapters", (source, manga_slug, key, ctx.base_url), compute)
    return json_response(
        payload, cache_control(app_state(request).settings.cache, "chapters", private=bool(key))
    )


@router.get(
    "/{source}/{manga_slug}/chapters/{chapter_slug}",
    response_model=list[str],
    summary="Chapter pages",
)
async def pages(request: Request, source: str, manga_slug: str, chapter_slug: str) -> Response:
    hosted = source_for(request, source)
    check_slug(manga_slug, MangaNotFound)
    check_slug(chapter_slug, ChapterNotFound)
    ctx, _ = await request_context(request, hosted)
    # Page URLs may be temporary: never cached, by the host or anyone else.
    urls = await hosted.source.pages(manga_slug, chapter_slug, ctx)
    return json_response(PAGE_LIST.dump_json(urls), NO_STORE)


async def read_json(request: Request) -> Any:
    raw = await request.body()
    try:
        return json.loads(raw) if raw.strip() else None
    except (ValueError, UnicodeDecodeError):
        raise InvalidRequest("The request body is not valid JSON.") from None
