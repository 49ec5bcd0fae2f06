"""An auth-required library through /_/alethia: the app's auth spelling, signed images."""

from urllib.parse import urlsplit

import pytest

from tests.faces.alethia.reader import AppReader, Library
from tests.helpers.hosts import add_reader

pytestmark = pytest.mark.anyio
KEY = "correct-horse-battery-staple"
SEARCH = {"query": "", "page": 1, "limit": 20, "sort": "title", "direction": "asc"}


async def test_api_key_library_is_read_with_signed_header_free_images(library: Library) -> None:
    async with library(auth="api_key", api_key=KEY) as served:
        reader = AppReader(served.client)
        source = await reader.source("local")
        assert source["auth"] == {"type": "apiKey", "required": True}

        refused = await served.client.post("/_/alethia/local/search", json=SEARCH)
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "INVALID_CREDENTIALS"

        missing = await served.client.post("/_/alethia/local/authenticate", json={})
        assert missing.json()["error"]["code"] == "MISSING_FIELDS"
        assert "api_key" not in missing.json()["error"]["message"]  # not the spec face's spelling

        # Whatever else the body holds (the type, in the app's spelling) is no obstacle.
        await reader.authenticate("local", {"type": "apiKey", "apiKey": KEY})
        assert reader.headers == {"X-API-Key": KEY}
        seen = await reader.read("local")
        assert all(image.status_code == 200 for image in seen.images)
        assert all("sig=" in url for url in seen.pages + seen.manga["covers"])

        unsigned = urlsplit(seen.pages[0])._replace(query="").geturl()
        assert (await served.client.get(unsigned)).status_code == 401


async def test_basic_library_and_failed_authentication(library: Library) -> None:
    async with library(auth="basic", username="reader", password="s3cret-pass") as served:
        reader = AppReader(served.client)
        assert (await reader.source("local"))["auth"] == {"type": "basic", "required": True}
        wrong = await served.client.post(
            "/_/alethia/local/authenticate", json={"username": "reader", "password": "nope"}
        )
        assert wrong.status_code == 401
        assert wrong.json()["success"] is False
        assert wrong.json()["error"]["code"] == "INVALID_CREDENTIALS"
        missing = await served.client.post("/_/alethia/local/authenticate", json={})
        assert missing.json()["error"]["code"] == "MISSING_FIELDS"

        await reader.authenticate("local", {"username": "reader", "password": "s3cret-pass"})
        seen = await reader.read("local")
        assert all(image.status_code == 200 for image in seen.images)


async def test_answers_that_needed_credentials_are_private(library: Library) -> None:
    async with library(auth="api_key", api_key=KEY) as served:
        headers = {"X-API-Key": KEY}
        response = await served.client.post("/_/alethia/local/search", json=SEARCH, headers=headers)
        assert response.headers["cache-control"].startswith("private")


async def test_a_library_that_accepts_the_hosts_readers(library: Library) -> None:
    async with library(auth="readers") as served:
        await add_reader(served, "mika", "hunter22")
        reader = AppReader(served.client)
        assert (await reader.source("local"))["auth"] == {"type": "basic", "required": True}
        wrong = await served.client.post(
            "/_/alethia/local/authenticate", json={"username": "mika", "password": "nope"}
        )
        assert wrong.status_code == 401 and wrong.json()["success"] is False
        await reader.authenticate("local", {"username": "mika", "password": "hunter22"})
        seen = await reader.read("local")
        assert seen.images and all(image.status_code == 200 for image in seen.images)
