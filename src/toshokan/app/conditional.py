"""ETag on JSON answers to GET, and 304 when the client already has them.

The tag is a hash of the body, so it changes exactly when the content does
and is the same on every replica. Answers of the core come with their tag
(computed once, when cached); other JSON answers are tagged here.
"""

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toshokan.core.hashing import etag_of


def matches(if_none_match: str, etag: str) -> bool:
    candidates = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
    return "*" in candidates or etag in candidates


def not_modified(start: Message) -> Message:
    headers = MutableHeaders(raw=list(start["headers"]))
    del headers["content-length"]
    del headers["content-type"]
    return {**start, "status": 304, "headers": headers.raw}


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
        passthrough = dropping = False

        async def buffered_send(message: Message) -> None:
            nonlocal start, passthrough, dropping
            if dropping:
                return  # the body of an answer already sent as 304
            if passthrough:
                await send(message)
                return
            if message["type"] == "http.response.start":
                headers = Headers(raw=message.get("headers", []))
                is_json = headers.get("content-type", "").startswith("application/json")
                tag = headers.get("etag")
                if (
                    message["status"] == 200
                    and tag
                    and if_none_match
                    and matches(if_none_match, tag)
                ):
                    dropping = True
                    await send(not_modified(message))
                    await send({"type": "http.response.body", "body": b""})
                    return
                if message["status"] != 200 or not is_json or tag:
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
                await send(not_modified({**start, "headers": headers.raw}))
                await send({"type": "http.response.body", "body": b""})
                return
            await send({**start, "headers": headers.raw})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, buffered_send)
