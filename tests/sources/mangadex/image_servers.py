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
    """MangaDex's at-home and uploads servers (WebP images), in front of the fake API."""

    def __init__(self, api: FakeMangaDex):
        self.api = api.transport()
        self.hosts = {httpx.URL(AT_HOME).host, httpx.URL(UPLOADS).host}
        self.requests: list[httpx.Request] = []
        self.body = webp()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host not in self.hosts:
            return await self.api.handle_async_request(request)
        self.requests.append(request)
        return httpx.Response(200, content=self.body, headers={"Content-Type": "image/webp"})
