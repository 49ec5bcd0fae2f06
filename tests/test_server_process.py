"""The real thing: `toshokan serve` in its own process, spoken to over HTTP."""

import re
import socket
import subprocess
import time

import httpx
import pytest

from tests.helpers.plugins import install_plugin, plugin_env
from tests.helpers.serving import REPO, free_port, running_host, serve_command

#: The host's one log format: ``2026-01-01 12:00:00,123 INFO toshokan.access: ...``.
LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ [a-z_.]+: \S")


@pytest.fixture
def server(tmp_path):
    site = install_plugin(tmp_path / "site")
    config = tmp_path / "toshokan.toml"
    config.write_text(
        f'[host]\nname = "processhost"\ndata_dir = "{tmp_path / "data"}"\n'
        '[sources.shelf]\nadapter = "catalog"\ntitles = 30\n'
    )
    args = ["--config", str(config), "--rate-limit", "50"]
    with running_host(args, "/shelf/health", env=plugin_env(site), timeout=30) as base:
        yield base


def test_served_over_http(server):
    with httpx.Client(base_url=server) as client:
        manifest = client.get("/").json()
        assert manifest["name"] == "processhost" and manifest["sources"] == ["shelf"]
        search = client.post("/shelf/search", json={"page": 2, "sort": "title", "limit": 10})
        assert search.json()["page"] == 2 and len(search.json()["results"]) == 10
        assert client.get("/shelf/title-001/chapters").status_code == 200
        missing = client.get("/shelf/nothing-here")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "MANGA_NOT_FOUND"
        preflight = client.options(
            "/shelf/search",
            headers={"Origin": "https://r.example", "Access-Control-Request-Method": "POST"},
        )
        assert preflight.status_code == 204
        statuses = [client.get("/shelf").status_code for _ in range(60)]
    assert statuses.count(429) > 0 and statuses[0] == 200


def serve_expecting_failure(config, site) -> subprocess.CompletedProcess[str]:
    """Run `toshokan serve` on a configuration that must stop it before it serves."""
    return subprocess.run(
        serve_command("--config", str(config), "--port", str(free_port())),
        env=plugin_env(site),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_bad_config_stops_with_a_message(tmp_path):
    site = install_plugin(tmp_path / "site")
    config = tmp_path / "bad.toml"
    config.write_text(
        f'[host]\ndata_dir = "{tmp_path}"\n[sources.shelf]\nadapter = "catalog"\ntitles = "lots"\n'
    )
    result = serve_expecting_failure(config, site)
    assert result.returncode == 2
    assert "configuration error: source 'shelf': settings titles" in result.stderr
    assert "Traceback" not in result.stderr


def test_invalid_declared_configuration_stops_with_one_line(tmp_path):
    site = install_plugin(tmp_path / "site", "badpreset", "tests.helpers.catalog:BadPresetCatalog")
    config = tmp_path / "bad.toml"
    config.write_text(f'[host]\ndata_dir = "{tmp_path}"\n[sources.shelf]\nadapter = "badpreset"\n')
    result = serve_expecting_failure(config, site)
    assert result.returncode != 0
    assert "configuration error: source 'shelf'" in result.stderr
    assert "preset 'Most viewed': sort 'views' is not declared" in result.stderr
    assert "Traceback" not in result.stderr


def test_every_line_on_stderr_has_the_one_log_format(tmp_path):
    """uvicorn's own lines, the host's and the access log: one format an operator can parse."""
    site = install_plugin(tmp_path / "site")
    config = tmp_path / "toshokan.toml"
    config.write_text(
        f'[host]\ndata_dir = "{tmp_path / "data"}"\n[sources.shelf]\nadapter = "catalog"\n'
    )
    port = free_port()
    process = subprocess.Popen(
        serve_command("--config", str(config), "--port", str(port)),
        env=plugin_env(site),
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None and time.monotonic() < deadline
            try:
                if httpx.get(f"http://127.0.0.1:{port}/shelf", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=20)
    lines = errors.splitlines()
    assert any('toshokan.access: 127.0.0.1 "GET /shelf" 200' in line for line in lines)
    assert any("uvicorn" in line for line in lines)
    assert [line for line in lines if not LOG_LINE.match(line)] == []


def test_a_port_in_use_stops_serve_with_one_line_before_it_starts(tmp_path):
    site = install_plugin(tmp_path / "site")
    config = tmp_path / "toshokan.toml"
    config.write_text(
        f'[host]\ndata_dir = "{tmp_path / "data"}"\n[sources.shelf]\nadapter = "catalog"\n'
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            serve_command("--config", str(config), "--port", str(port)),
            env=plugin_env(site),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode != 0
    assert result.stdout == ""  # the web reader's address is not announced
    [line] = result.stderr.splitlines()
    assert f"127.0.0.1:{port}" in line and "in use" in line
    assert not (tmp_path / "data").exists()  # nothing started
