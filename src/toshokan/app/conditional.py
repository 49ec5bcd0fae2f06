"""ETag on JSON answers to GET, and 304 when the client already has them.

The tag is a hash of the body, so it changes exactly when the content does
and is the same on every replica. Responses that set their own ETag (page
images streamed by a source) are left alone.
"""

import hashlib

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def etag_of(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def matches(if_none_match: str, etag: str) -> bool:
    candidates = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
    return "*" in candidates or etag in candidates


class ConditionalGetMiddleware:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        if_none_match = Headers(scope=scope).get("if-none-match")
        start: Message | None = None
        chunks: list[bytes] = []
        passthrough = False

        async def buffered_send(message: Message) -> None:
            nonlocal start, passthrough
            if passthrough:
                await send(message)
                return
            if message["type"] == "http.response.start":
                headers = Headers(raw=message.get("headers", []))
                is_json = headers.get("content-type", "").startswith("application/json")
                if message["status"] != 200 or not is_json or "etag" in headers:
                    passthrough = True
                    await send(message)
                else:
                    start = message
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            assert start is not None
            body = b"".join(chunks)
            tag = etag_of(body)
            headers = MutableHeaders(raw=start["headers"])
            headers["ETag"] = tag
            if if_none_match and matches(if_none_match, tag):
                del headers["content-length"]
                del headers["content-type"]
                await send({**start, "status": 304, "headers": headers.raw})
                await send({"type": "http.response.body", "body": b""})
                return
            await send({**start, "headers": headers.raw})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, buffered_send)
