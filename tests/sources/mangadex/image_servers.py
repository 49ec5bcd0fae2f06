"""MangaDex's image servers (at-home and uploads) in front of the fake API, for every face
that reads MangaDex pages."""

import io

import httpx
from PIL import Image

from tests.sources.mangadex.fake import AT_HOME, UPLOADS, FakeMangaDex


def webp(
    width: int = 900, height: int = 1300, colour: tuple[int, int, int] = (200, 40, 40)
) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, "WEBP", quality=60)
    return buffer.getvalue()


class ImageServers(httpx.AsyncBaseTransport):
    """MangaDex's at-home and uploads servers (WebP images), in front of the fake API and the
    MangaDex@Home report endpoint.

    An at-home node says whether it had the image cached (``X-Cache``: ``HIT`` for the
    paths in ``cached``, else ``MISS``); a path in ``failing`` answers 500.
    """

    def __init__(self, api: FakeMangaDex):
        self.api = api.transport()
        self.hosts = {httpx.URL(AT_HOME).host, httpx.URL(UPLOADS).host}
        self.requests: list[httpx.Request] = []
        self.body = webp()
        #: What the uploads server answers (covers), when not ``body``.
        self.covers: bytes | None = None
        self.cached: set[str] = set()
        self.failing: set[str] = set()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host not in self.hosts:
            return await self.api.handle_async_request(request)
        self.requests.append(request)
        if request.url.path in self.failing:
            return httpx.Response(500, content=b"node failure")
        headers = {"Content-Type": "image/webp"}
        if request.url.host == httpx.URL(AT_HOME).host:
            headers["X-Cache"] = "HIT" if request.url.path in self.cached else "MISS"
        body = self.body
        if request.url.host == httpx.URL(UPLOADS).host and self.covers is not None:
            body = self.covers
        return httpx.Response(200, content=body, headers=headers)
