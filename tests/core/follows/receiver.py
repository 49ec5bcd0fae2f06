"""A local stand-in for notification services: it takes what Apprise's ``json://`` and
``ntfy://`` send (a JSON body POSTed to the URL's path, or to the server's root for ntfy,
the topic in the body, as ntfy's publish-as-JSON API takes it) and keeps it."""

from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


@dataclass
class Received:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]


@dataclass
class Receiver:
    """Records every message; answers ``failing`` of them with a 500 first."""

    messages: list[Received] = field(default_factory=list)
    failing: int = 0
    refused: int = 0

    def app(self) -> Starlette:
        async def take(request: Request) -> Response:
            if self.failing > 0:
                self.failing -= 1
                self.refused += 1
                return JSONResponse({"error": "unavailable"}, status_code=500)
            body = await request.json()
            self.messages.append(
                Received("/" + request.path_params["path"], body, dict(request.headers))
            )
            return JSONResponse({"id": str(len(self.messages))})

        return Starlette(routes=[Route("/{path:path}", take, methods=["POST"])])
