"""How the reader's files are served: hashed names cached for a year, a small first load, its address."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.browsing import Watched
from tests.helpers.serving import REPO, free_port
from toshokan.config import load_settings
from toshokan.faces.web import reader_address

ASSET = re.compile(r'(?:src|href)="(/_/assets/[^"]+)"')
#: The reader's own first load, all bytes over the wire: the page, its script, style and icon.
FIRST_LOAD_BUDGET = 32 * 1024


def test_shell_links_assets_by_content_hash_cached_for_a_year(host: str) -> None:
    shell = httpx.get(f"{host}/_/")
    assert shell.status_code == 200 and shell.headers["content-type"].startswith("text/html")
    assert shell.headers["cache-control"] == "no-cache"
    assert (
        httpx.get(f"{host}/_/", headers={"If-None-Match": shell.headers["etag"]}).status_code == 304
    )
    links = set(ASSET.findall(shell.text))
    assert {Path(link).suffix for link in links} == {".js", ".css", ".svg"}
    # The modules import each other by plain names, which the page's import map makes hashed.
    found = re.search(r'<script type="importmap">(.*?)</script>', shell.text)
    assert found is not None
    imports = json.loads(found[1])["imports"]
    assert "/_/assets/app.js" in imports and "/_/assets/reader.js" in imports
    modules = set(imports.values())
    assert {link for link in links if link.endswith(".js")} == {imports["/_/assets/app.js"]}
    for link in modules:
        assert re.fullmatch(r"/_/assets/[a-z]+\.[0-9a-f]{12}\.js", link)
        answer = httpx.get(host + link)
        assert answer.status_code == 200
        assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"
    for link in links:
        assert re.fullmatch(r"/_/assets/[a-z]+\.[0-9a-f]{12}\.[a-z]+", link)
        answer = httpx.get(host + link, headers={"Accept-Encoding": "gzip"})
        assert answer.status_code == 200
        assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert answer.headers["content-encoding"] == "gzip"
        plain = httpx.get(host + link, headers={"Accept-Encoding": "identity"})
        assert "content-encoding" not in plain.headers and plain.content == answer.content


def test_unknown_or_unhashed_assets_are_the_error_object(host: str) -> None:
    for path in (
        "/_%2F",
        "/_",
        "/_/assets/app.js",
        "/_/assets/app.000000000000.js",
        "/_/assets/..%2Fapp.js",
    ):
        answer = httpx.get(host + path)
        assert answer.status_code == 404
        assert answer.json()["error"]["code"] == "NOT_FOUND"


def test_the_first_load_is_small(desktop: Watched) -> None:
    page = desktop.open("/_/")
    page.get_by_role("list", name="Local Library: A to Z").locator("a.cover").first.wait_for()
    page.wait_for_load_state("networkidle")
    sizes: dict[str, int] = page.evaluate(
        """() => Object.fromEntries(performance.getEntriesByType('navigation')
               .concat(performance.getEntriesByType('resource')).map(e => [e.name, e.transferSize]))"""
    )
    own = sum(size for url, size in sizes.items() if url.endswith("/_/") or "/_/assets/" in url)
    print(
        f"first load of /_/: reader {own} bytes; with the library's JSON and covers "
        f"{sum(sizes.values())} bytes over {len(sizes)} requests"
    )
    assert 0 < own < FIRST_LOAD_BUDGET


@pytest.mark.parametrize(
    ("server", "public_url", "expected"),
    [
        ({"host": "127.0.0.1", "port": 8000}, None, "http://127.0.0.1:8000/_/"),
        ({"host": "0.0.0.0", "port": 9000}, None, "http://localhost:9000/_/"),
        ({"host": "::1", "port": 8000}, None, "http://[::1]:8000/_/"),
        ({}, "https://comics.example/", "https://comics.example/_/"),
    ],
)
def test_reader_address(server: dict[str, Any], public_url: str | None, expected: str) -> None:
    host = {"public_url": public_url} if public_url else {}
    settings = load_settings(None, server=server, host={**host, "secret": "s" * 32})
    assert reader_address(settings) == expected


def test_serve_prints_the_reader_address_at_start(tmp_path: Path) -> None:
    port = free_port()
    (tmp_path / "library").mkdir()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toshokan",
            "serve",
            "--port",
            str(port),
            "--library",
            str(tmp_path / "library"),
        ],
        cwd=REPO,
        env={**os.environ, "TOSHOKAN_HOST__DATA_DIR": str(tmp_path / "data")},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert (
            process.stdout.readline().strip()
            == f"toshokan: web reader at http://127.0.0.1:{port}/_/"
        )
    finally:
        process.terminate()
        process.wait(timeout=20)
