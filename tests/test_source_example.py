"""The adapter example of docs/writing-a-source.md works as printed, against a fake of its
upstream."""

import importlib
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import respx

from tests.helpers.plugins import install_plugin
from toshokan.registry import adapter
from toshokan.testing import serve

pytestmark = pytest.mark.anyio
PAGE = Path(__file__).resolve().parents[1] / "docs" / "writing-a-source.md"
API = "https://shelf.example/api"


def documented_adapter_source() -> str:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
    return next(b for b in blocks if "class MyShelf(Source[Settings])" in b)


@pytest.fixture
def installed_example(tmp_path: Path) -> Iterator[Path]:
    """The example as a package installed next to toshokan, found through its entry point."""
    site = tmp_path / "site"
    package = site / "my_shelf"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(documented_adapter_source())
    install_plugin(site, "myshelf", "my_shelf:MyShelf")
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        yield package
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("my_shelf", None)


def test_the_documented_adapter_passes_mypy_strict(installed_example: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(installed_example)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout


@respx.mock
async def test_the_documented_adapter_serves_through_the_host(tmp_path, installed_example):
    adapter_class = adapter("myshelf")
    assert adapter_class.__module__ == "my_shelf"
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

    async with serve(adapter_class, slug="shelf", data_dir=tmp_path) as host:
        found = (
            await host.client.post(
                "/shelf/search", json={"page": 1, "sort": "relevance", "query": "dune"}
            )
        ).json()
        manga = (await host.client.get("/shelf/dune")).json()
        missing = await host.client.get("/shelf/missing")
        chapters = (await host.client.get("/shelf/dune/chapters")).json()
        pages = (await host.client.get("/shelf/dune/chapters/part-1")).json()
        ping = (await host.client.get("/shelf/ping")).json()
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
