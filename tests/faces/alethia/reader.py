"""The Alethia app's walk through a host: add it, pick a source, search, open, read.

Requests go where the app sends them (``{host}/{source}/...`` with the host
address the user typed), answers are decoded with :mod:`app_decoder`, the
pages path carries a random integer where the manga slug would be (the
app's own row id), and images are fetched with no header at all.
"""

import random
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.faces.alethia import app_decoder as decode
from toshokan.testing import ServedHost

HOST = "http://testserver/_/alethia"

#: ``library(**local_settings)``: a host serving the sample library as ``local`` (a fixture).
Library = Callable[..., AbstractAsyncContextManager[ServedHost]]


@dataclass
class Read:
    """What one walk saw: enough for a test to check more."""

    source: dict[str, Any]
    results: list[dict[str, Any]] = field(default_factory=list)
    manga: dict[str, Any] = field(default_factory=dict)
    chapters: list[dict[str, Any]] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)
    images: list[httpx.Response] = field(default_factory=list)


@dataclass
class AppReader:
    """One installation of the app: a client to the host, the auth headers it stored."""

    client: httpx.AsyncClient
    #: Fetches image URLs outside the host (an upstream's image server); none when all are local.
    images: httpx.AsyncClient | None = None
    headers: dict[str, str] = field(default_factory=dict)
    host: str = HOST

    async def get(self, path: str) -> Any:
        response = await self.client.get(f"{self.host}{path}", headers=self.headers)
        assert response.status_code == 200, response.text
        return response.json()

    async def post(self, path: str, body: dict[str, Any]) -> Any:
        response = await self.client.post(f"{self.host}{path}", json=body, headers=self.headers)
        assert response.status_code == 200, response.text
        return response.json()

    async def add_host(self) -> dict[str, Any]:
        return decode.host(await self.get(""))

    async def source(self, slug: str) -> dict[str, Any]:
        host = await self.add_host()
        found = [s for s in host["sources"] if s["slug"] == slug]
        assert found, f"the host lists no source {slug!r}"
        return found[0]

    async def authenticate(self, slug: str, body: dict[str, str]) -> None:
        answer = await self.post(f"/{slug}/authenticate", body)
        assert answer["success"] is True
        self.headers = answer["headers"]

    async def search(self, slug: str, request: dict[str, Any]) -> dict[str, Any]:
        return decode.search_response(await self.post(f"/{slug}/search", request))

    async def fetch_image(self, url: str) -> httpx.Response:
        """As the app's image loader: the URL alone, no auth header, cookie or Referer."""
        on_host = url.startswith(str(self.client.base_url))
        fetcher = self.client if on_host or self.images is None else self.images
        response = await fetcher.get(url)
        request_headers = {k.lower() for k in response.request.headers}
        assert not request_headers & {"authorization", "cookie", "referer", "x-api-key"}
        return response

    async def read(self, slug: str) -> Read:
        """Add the host, run every preset, open the first title and read its newest chapter."""
        source = await self.source(slug)
        seen = Read(source=source)
        for preset in source["presets"]:
            seen.results = (await self.search(slug, preset["request"]))["results"]
        if not source["presets"]:
            request = {"query": "", "page": 1, "limit": 20, "direction": "desc"}
            request["sort"] = source["search"]["sort"][0]
            seen.results = (await self.search(slug, request))["results"]
        assert seen.results, "the search found nothing to read"
        entry = seen.results[0]
        seen.manga = decode.manga(await self.get(f"/{slug}/{entry['slug']}"))
        seen.chapters = decode.chapters(await self.get(f"/{slug}/{entry['slug']}/chapters"))
        assert seen.chapters, "the title has no chapters"
        row_id = random.randint(1, 2**53)
        path = f"/{slug}/{row_id}/chapters/{seen.chapters[0]['slug']}"
        seen.pages = decode.pages(await self.get(path))
        seen.images = [await self.fetch_image(url) for url in seen.pages]
        return seen
