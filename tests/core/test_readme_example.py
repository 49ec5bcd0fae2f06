"""The adapter example in the README works as printed, against a fake of its upstream."""

import re
import types
from pathlib import Path

import httpx
import pytest
import respx

from toshokan.app import create_app
from toshokan.app.host import Host, HostedSource
from toshokan.config import load_settings
from toshokan.models import SourceStatus
from toshokan.sdk import HostServices

pytestmark = pytest.mark.anyio
README = Path(__file__).resolve().parents[2] / "README.md"
API = "https://shelf.example/api"


def readme_adapter_module() -> types.ModuleType:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    source = next(b for b in blocks if "class MyShelf(Source)" in b)
    module = types.ModuleType("my_shelf")
    exec(compile(source, "README.md", "exec"), module.__dict__)
    return module


@respx.mock
async def test_readme_adapter_serves_through_the_host(tmp_path):
    from asgi_lifespan import LifespanManager

    module = readme_adapter_module()
    respx.get(f"{API}/books", params={"q": "dune", "page": "1"}).respond(
        json={"items": [{"id": "dune", "title": "Dune", "cover": None}], "hasNext": False}
    )
    respx.get(f"{API}/books/dune").respond(
        json={"url": "https://shelf.example/dune", "title": "Dune"}
    )
    respx.get(f"{API}/books/missing").respond(404, text="no such book")
    respx.get(f"{API}/books/dune/parts").respond(
        json=[
            {
                "id": "part-1",
                "url": "https://shelf.example/dune/1",
                "n": 1,
                "date": "2024-05-01T00:00:00Z",
            }
        ]
    )
    respx.get(f"{API}/parts/part-1/pages").respond(
        json={"urls": ["https://img.shelf.example/1.jpg"]}
    )
    respx.get(f"{API}/health").respond(json={})

    settings = load_settings(None, host={"data_dir": str(tmp_path)})
    services = HostServices(user_agent="toshokan-test", data_dir=tmp_path, secret=b"k" * 32)
    source = module.MyShelf("shelf", module.Settings(), services)
    host = Host(settings, services, [HostedSource("shelf", "myshelf", SourceStatus.ACTIVE, source)])
    app = create_app(settings, host)
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            found = (
                await client.post(
                    "/shelf/search", json={"page": 1, "sort": "relevance", "query": "dune"}
                )
            ).json()
            manga = (await client.get("/shelf/dune")).json()
            missing = await client.get("/shelf/missing")
            chapters = (await client.get("/shelf/dune/chapters")).json()
            pages = (await client.get("/shelf/dune/chapters/part-1")).json()
            ping = (await client.get("/shelf/ping")).json()
    assert found == {
        "results": [{"slug": "dune", "title": "Dune", "cover": None}],
        "page": 1,
        "more": False,
    }
    assert manga["title"] == "Dune" and manga["synopsis"] == "No Description."
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "MANGA_NOT_FOUND"
    assert chapters[0]["slug"] == "part-1" and chapters[0]["scanlator"] == "Unknown Scanlator"
    assert pages == ["https://img.shelf.example/1.jpg"]
    assert ping["status"] == "ok"
