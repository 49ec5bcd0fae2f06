"""The local library through the whole host: the embedded default and a protected library."""

import httpx
import pytest
from asgi_lifespan import LifespanManager

from tests.helpers.serving import running_host
from toshokan.application import create_app
from toshokan.config import load_settings
from toshokan.models import Chapter, Manga, SearchResponse, SourceConfiguration


def read_a_title(client: httpx.Client) -> None:
    """What a reader app does: discover, configure, search, open a title, read a page."""
    manifest = client.get("/").json()
    assert manifest["sources"] == ["local"]
    config = SourceConfiguration.model_validate(client.get("/local").json())
    assert config.search.tags, "the sample library declares its tags"
    # With no public_url configured, links in the configuration use the address the host listens on.
    assert config.icon.startswith(str(client.base_url).rstrip("/"))
    assert client.get(config.icon).headers["content-type"] == "image/png"
    found = SearchResponse.model_validate(
        client.post("/local/search", json={"page": 1, "sort": "title", "direction": "asc"}).json()
    )
    assert found.results
    manga = Manga.model_validate(client.get(f"/local/{found.results[0].slug}").json())
    chapters = [
        Chapter.model_validate(c) for c in client.get(f"/local/{manga.slug}/chapters").json()
    ]
    assert chapters == sorted(chapters, key=lambda c: (c.date, c.number), reverse=True)
    pages = client.get(f"/local/{manga.slug}/chapters/{chapters[0].slug}").json()
    assert pages and all(url.startswith(str(client.base_url)) for url in pages)
    image = client.get(pages[0])
    assert image.status_code == 200 and image.headers["content-type"].startswith("image/")
    assert len(image.content) == int(image.headers["content-length"]) > 0


def test_embedded_default_writes_sample_content_and_serves_it(tmp_path):
    with running_host([], "/local/health", env={"XDG_DATA_HOME": str(tmp_path)}) as base:
        assert (tmp_path / "toshokan" / "library").is_dir()
        with httpx.Client(base_url=base) as client:
            read_a_title(client)


def test_library_flag_serves_that_folder(tmp_path):
    from toshokan.sources.local import write_demo_library

    library = tmp_path / "comics"
    write_demo_library(library, series=2, chapters=2, pages=2)
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    with (
        running_host(["--library", str(library)], "/local/health", env=env) as base,
        httpx.Client(base_url=base) as client,
    ):
        read_a_title(client)
        total = client.post("/local/search", json={"page": 1, "sort": "title", "limit": 100}).json()
    assert not (tmp_path / "data" / "toshokan" / "library").exists()  # no sample content written
    assert 2 <= len(total["results"]) <= 4


@pytest.mark.anyio
async def test_protected_library_signs_page_urls(tmp_path):
    from toshokan.sources.local import write_demo_library

    library = tmp_path / "comics"
    write_demo_library(library, series=2, chapters=2, pages=2)
    settings = load_settings(
        None,
        host={"data_dir": str(tmp_path / "data"), "public_url": "https://comics.example"},
        sources={
            "local": {
                "root": str(library),
                "auth": "basic",
                "username": "ann",
                "password": "pw-123456",
                "watch": False,
            }
        },
    )
    app = create_app(settings)
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(
            transport=transport, base_url="https://comics.example"
        ) as client:
            assert (
                await client.post("/local/search", json={"page": 1, "sort": "title"})
            ).status_code == 401
            login = (
                await client.post(
                    "/local/authenticate", json={"username": "ann", "password": "pw-123456"}
                )
            ).json()
            headers = login["headers"]
            wrong = await client.post(
                "/local/authenticate", json={"username": "ann", "password": "nope"}
            )
            found = (
                await client.post(
                    "/local/search", json={"page": 1, "sort": "title"}, headers=headers
                )
            ).json()
            slug = found["results"][0]["slug"]
            chapters = (await client.get(f"/local/{slug}/chapters", headers=headers)).json()
            pages = (
                await client.get(f"/local/{slug}/chapters/{chapters[0]['slug']}", headers=headers)
            ).json()
            image = await client.get(pages[0])  # an image loader sends no auth headers
            unsigned = await client.get(pages[0].split("?")[0])
            tampered = await client.get(pages[0].replace("sig=", "sig=0"))
    assert login["success"] is True and headers["Authorization"].startswith("Basic ")
    assert wrong.status_code == 401 and wrong.json()["success"] is False
    assert all("sig=" in url and "exp=" in url for url in pages)
    assert image.status_code == 200 and image.headers["content-type"].startswith("image/")
    assert unsigned.status_code == 401 and unsigned.json()["error"]["code"] == "INVALID_CREDENTIALS"
    assert tampered.status_code in (401, 403) and "error" in tampered.json()
