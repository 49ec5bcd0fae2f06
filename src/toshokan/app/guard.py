"""The last line of defence: any exception that escaped becomes a 500 Error object.

Starlette's own handler for unexpected exceptions sits outside every other
middleware, so its answer would miss CORS headers; this one sits inside them.
"""

import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toshokan.app.responses import error_response

log = logging.getLogger("toshokan.errors")


class InternalErrorMiddleware:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception:
            # The path is logged, never headers or bodies, which may carry credentials.
            log.exception("unhandled error on %s %s", scope["method"], scope["path"])
            if started:
                raise
            response = error_response(
                "INTERNAL_ERROR", "The host failed to answer this request.", 500
            )
            await response(scope, receive, send)
