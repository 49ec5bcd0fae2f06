"""The spec's JSON interface: the nine endpoints, a thin face over the core.

Each handler reads what the request says, asks the core, and writes the
answer's bytes with the Cache-Control the spec's guidance gives. Starlette's
router, not a framework's parameter solving, sits on the request path: the
paths are few and fixed, and the core checks everything else.
"""

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from toshokan.core import Answer, Core
from toshokan.core.http import caller_of
from toshokan.errors import (
    HostError,
    InvalidRequest,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
)
from toshokan.faces.spec.caching import NO_STORE, CacheControl
from toshokan.models import AuthResponse, Health
from toshokan.models.auth import AuthError

HEALTH_BODY = Health().model_dump_json(exclude_none=True).encode()
POST_ONLY = frozenset({"search", "authenticate"})
#: A search or authentication body larger than this is refused before it is parsed.
MAX_BODY_BYTES = 64 * 1024
#: JSON nested deeper than this is refused: no search or credential needs more than three levels.
MAX_JSON_DEPTH = 16


def core_of(request: Request) -> Core:
    core: Core = request.app.state.core
    return core


def cache_of(request: Request) -> CacheControl:
    cache_control: CacheControl = request.app.state.cache_control
    return cache_control


def answer_response(answer: Answer[Any], cache_control: str) -> Response:
    return Response(
        answer.body,
        media_type="application/json",
        headers={"Cache-Control": cache_control, "ETag": answer.etag},
    )


def source_slug(request: Request) -> str:
    slug: str = request.path_params["source"]
    if slug.startswith("_") or "." in slug:
        # The host's own namespace (docs, page images): never a source.
        raise NotFound(f"Nothing is at {request.url.path[:200]}.")
    return slug


async def manifest(request: Request) -> Response:
    answer = await core_of(request).manifest()
    return answer_response(answer, cache_of(request).public["configuration"])


async def configuration(request: Request) -> Response:
    answer = await core_of(request).configuration_answer(source_slug(request))
    return answer_response(answer, cache_of(request).public["configuration"])


async def health(request: Request) -> Response:
    detail = core_of(request).health(source_slug(request))
    body = HEALTH_BODY if detail is None else Health(detail=detail).model_dump_json().encode()
    return Response(body, media_type="application/json", headers={"Cache-Control": NO_STORE})


async def ping(request: Request) -> Response:
    result = await core_of(request).ping(source_slug(request))
    return Response(
        result.model_dump_json(exclude_none=True).encode(),
        media_type="application/json",
        headers={"Cache-Control": NO_STORE},
    )


async def search(request: Request) -> Response:
    slug = source_slug(request)
    body = await read_json(request)
    answer = await core_of(request).search(slug, body, caller_of(request))
    return answer_response(answer, cache_of(request).of("search", answer.private))


async def manga(request: Request) -> Response:
    slug, manga_slug = source_slug(request), request.path_params["manga"]
    if manga_slug in POST_ONLY:
        raise MethodNotAllowed(f"/{slug}/{manga_slug} accepts POST only.")
    answer = await core_of(request).manga(slug, manga_slug, caller_of(request))
    return answer_response(answer, cache_of(request).of("manga", answer.private))


async def chapters(request: Request) -> Response:
    slug, manga_slug = source_slug(request), request.path_params["manga"]
    answer = await core_of(request).chapters(slug, manga_slug, caller_of(request))
    return answer_response(answer, cache_of(request).of("chapters", answer.private))


async def pages(request: Request) -> Response:
    params = request.path_params
    answer = await core_of(request).pages(
        source_slug(request), params["manga"], params["chapter"], caller_of(request)
    )
    # Page URLs may be temporary: never cached, by the host or anyone else.
    return Response(answer.body, media_type="application/json", headers={"Cache-Control": NO_STORE})


async def authenticate(request: Request) -> Response:
    """Failures use the spec's failure form ``{success: false, error}`` with the code's status."""
    slug = source_slug(request)
    core = core_of(request)
    core.source(slug)  # an unknown source is a plain 404 Error object
    try:
        body = await read_json(request)
        headers = await core.authenticate(slug, body, caller_of(request))
    except HostError as error:
        failure = AuthResponse(
            success=False, error=AuthError(code=error.code, message=error.message)
        )
        return JSONResponse(
            failure.model_dump(exclude_none=True),
            status_code=error.status,
            headers={"Cache-Control": NO_STORE, **error.headers},
        )
    return JSONResponse({"success": True, "headers": headers}, headers={"Cache-Control": NO_STORE})


async def read_json(request: Request) -> Any:
    """The body as JSON, bounded in size and depth; ``None`` when it is empty."""
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _too_large()
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY_BYTES:
            raise _too_large()
    if not raw.strip():
        return None
    too_deep = InvalidRequest(f"The request body nests deeper than {MAX_JSON_DEPTH} levels.")
    try:
        body = json.loads(raw)
    except RecursionError:
        raise too_deep from None
    except (ValueError, UnicodeDecodeError):
        raise InvalidRequest("The request body is not valid JSON.") from None
    if _depth(body) > MAX_JSON_DEPTH:
        raise too_deep
    return body


def _too_large() -> PayloadTooLarge:
    return PayloadTooLarge(f"The request body is larger than {MAX_BODY_BYTES // 1024} KiB.")


def _depth(value: Any) -> int:
    """How deeply ``value`` nests arrays and objects, walked without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        )
        for child in children:
            if isinstance(child, dict | list):
                if level + 1 > MAX_JSON_DEPTH:
                    return level + 1
                stack.append((child, level + 1))
        deepest = max(deepest, level)
    return deepest


def routes() -> list[BaseRoute]:
    return [
        Route("/", manifest, methods=["GET"], name="manifest"),
        Route("/{source}", configuration, methods=["GET"], name="configuration"),
        Route("/{source}/health", health, methods=["GET"], name="health"),
        Route("/{source}/ping", ping, methods=["GET"], name="ping"),
        Route("/{source}/authenticate", authenticate, methods=["POST"], name="authenticate"),
        Route("/{source}/search", search, methods=["POST"], name="search"),
        Route("/{source}/{manga}", manga, methods=["GET"], name="manga"),
        Route("/{source}/{manga}/chapters", chapters, methods=["GET"], name="chapters"),
        Route("/{source}/{manga}/chapters/{chapter}", pages, methods=["GET"], name="pages"),
    ]
