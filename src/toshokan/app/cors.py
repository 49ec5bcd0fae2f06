"""Cross-origin access as DECISIONS.md rules it.

Starlette's CORS middleware answers preflights with 200 and a plain-text
400 for refused origins; the ruling wants 204 and the Error object, so the
little that CORS needs is done here.
"""

from collections.abc import Iterable

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toshokan.app.responses import error_response

METHODS = "GET, POST, OPTIONS"


class CorsMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        origins: Iterable[str],
        tools_origin: str | None,
        auth_headers: Iterable[str],
    ):
        self.app = app
        origins = list(origins)
        self.any_origin = "*" in origins
        self.origins = {o.rstrip("/") for o in origins if o != "*"}
        if tools_origin:
            self.origins.add(tools_origin.rstrip("/"))
        self.allow_headers = ", ".join(
            dict.fromkeys(["Content-Type", "Authorization", *auth_headers])
        )

    def allowed(self, origin: str) -> bool:
        return self.any_origin or origin.rstrip("/") in self.origins

    def cors_headers(self, origin: str) -> dict[str, str]:
        if self.any_origin:
            return {"Access-Control-Allow-Origin": "*"}
        return {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        is_preflight = scope["method"] == "OPTIONS" and "access-control-request-method" in headers
        if is_preflight:
            await self._preflight(origin, scope, receive, send)
            return
        if origin is None or not self.allowed(origin):
            await self.app(scope, receive, send)
            return
        extra = [(k.lower().encode(), v.encode()) for k, v in self.cors_headers(origin).items()]
        extra.append((b"access-control-expose-headers", b"ETag, Retry-After"))

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_cors)

    async def _preflight(
        self, origin: str | None, scope: Scope, receive: Receive, send: Send
    ) -> None:
        if origin is None or not self.allowed(origin):
            response: Response = error_response(
                "INVALID_REQUEST", "This origin may not call the host.", 403
            )
        else:
            response = Response(
                status_code=204,
                headers={
                    **self.cors_headers(origin),
                    "Access-Control-Allow-Methods": METHODS,
                    "Access-Control-Allow-Headers": self.allow_headers,
                    "Access-Control-Max-Age": "86400",
                },
            )
        await response(scope, receive, send)
