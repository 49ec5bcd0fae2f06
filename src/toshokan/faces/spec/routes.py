"""The spec's JSON interface: the nine endpoints, a thin face over the core.

Each handler reads what the request says, asks the core, and writes the
answer's bytes with the Cache-Control the spec's guidance gives. Starlette's
router, not a framework's parameter solving, sits on the request path: the
paths are few and fixed, and the core checks everything else.
"""

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from toshokan.core import Answer
from toshokan.core.cache_control import NO_STORE, cache_control_of
from toshokan.core.http import (
    POST_ONLY,
    authenticate,
    entry_of,
    source_slug,
    visit_of,
    visit_with_body,
)
from toshokan.errors import MethodNotAllowed
from toshokan.models import Health

#: The authenticate endpoint, as the edge matches it (its failures take the spec's sign-in form).
AUTHENTICATE_ROUTE = r"/[^/]+/authenticate"
HEALTH_BODY = Health().model_dump_json(exclude_none=True).encode()


def answer_response(answer: Answer[Any], cache_control: str) -> Response:
    return Response(
        answer.body,
        media_type="application/json",
        headers={"Cache-Control": cache_control, "ETag": answer.etag},
    )


async def manifest(request: Request) -> Response:
    answer = await entry_of(request).core.manifest()
    return answer_response(answer, cache_control_of(request, "configuration", False))


async def configuration(request: Request) -> Response:
    answer = await entry_of(request).core.configuration_answer(source_slug(request))
    return answer_response(answer, cache_control_of(request, "configuration", False))


async def health(request: Request) -> Response:
    detail = entry_of(request).core.health(source_slug(request))
    body = HEALTH_BODY if detail is None else Health(detail=detail).model_dump_json().encode()
    return Response(body, media_type="application/json", headers={"Cache-Control": NO_STORE})


async def ping(request: Request) -> Response:
    result = await entry_of(request).core.ping(source_slug(request))
    return Response(
        result.model_dump_json(exclude_none=True).encode(),
        media_type="application/json",
        headers={"Cache-Control": NO_STORE},
    )


async def search(request: Request) -> Response:
    visit, body = await visit_with_body(request)
    answer = await visit.search(body)
    return answer_response(answer, cache_control_of(request, "search", answer.private))


async def manga(request: Request) -> Response:
    manga_slug = request.path_params["manga"]
    if manga_slug in POST_ONLY:
        raise MethodNotAllowed(f"/{source_slug(request)}/{manga_slug} accepts POST only.")
    visit = await visit_of(request)
    answer = await visit.manga(manga_slug)
    return answer_response(answer, cache_control_of(request, "manga", answer.private))


async def chapters(request: Request) -> Response:
    visit = await visit_of(request)
    answer = await visit.chapters(request.path_params["manga"])
    return answer_response(answer, cache_control_of(request, "chapters", answer.private))


async def pages(request: Request) -> Response:
    params = request.path_params
    visit = await visit_of(request)
    answer = await visit.pages(params["manga"], params["chapter"])
    # Page URLs may be temporary: never cached, by the host or anyone else.
    return Response(answer.body, media_type="application/json", headers={"Cache-Control": NO_STORE})


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
