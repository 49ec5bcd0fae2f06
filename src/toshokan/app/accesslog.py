"""One log line per request: method, path, status, duration.

Replaces uvicorn's access log, which prints query strings; page URLs of a
protected library carry their signature there, and nothing that grants
access is written to a log.
"""

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("toshokan.access")


class AccessLogMiddleware:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def recording_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, recording_send)
        finally:
            client = scope.get("client")
            log.info(
                '%s "%s %s" %d %.1fms',
                client[0] if client else "-",
                scope["method"],
                scope["path"],
                status,
                (time.perf_counter() - started) * 1000,
            )
