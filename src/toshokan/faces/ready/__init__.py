"""The host's readiness for load balancers, at ``/_/ready``.

``/<source>/health`` says one source answers; this says the host as a whole
can serve: 200 when every required check of the core's registry
(:mod:`toshokan.core.readiness`) passes, 503 when one does not, each check's
state in the body either way. It spends no rate-limit budget, is never
cached, and carries no credentials or addresses a check did not put in its
own message.
"""

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from toshokan.core.cache_control import NO_STORE_HEADERS
from toshokan.core.face import AppState, Face
from toshokan.core.http import entry_of

PATH = "/_/ready"


async def ready(request: Request) -> JSONResponse:
    core = entry_of(request).core
    is_ready, checks = await core.readiness.report()
    return JSONResponse(
        {"status": "ready" if is_ready else "unavailable", "checks": checks},
        status_code=200 if is_ready else 503,
        headers=NO_STORE_HEADERS,
    )


def ready_routes() -> list[BaseRoute]:
    return [Route(PATH, ready, methods=["GET"])]


FACE = Face(
    name="ready",
    prefix=PATH,
    routes=ready_routes,
    names=frozenset({"ready"}),
    unbudgeted_routes=(PATH,),
    reads=frozenset({AppState.CORE}),
)

__all__ = ["FACE", "PATH"]
