"""Replicas sharing Redis behind a real nginx (Debian's), configured by examples/nginx.conf: a
reader goes from the manifest to every page image of a chapter through it, on links naming
nginx."""

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.cluster.library import SEARCH, library, write_config
from tests.cluster.replicas import Replica, replicas
from tests.cluster.servers import listening
from tests.helpers.serving import REPO, free_port
from tests.sources.opds.live import need

EXAMPLE = REPO / "examples" / "nginx.conf"


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next(
        (path for path in ("/usr/sbin/nginx",) if os.access(path, os.X_OK)), None
    )


def site(upstreams: list[Replica], port: int) -> str:
    """The example site with the replicas as its upstream, listening on a loopback port."""
    text = EXAMPLE.read_text(encoding="utf-8")
    servers = "".join(
        f"    server 127.0.0.1:{r.port} max_fails=3 fail_timeout=10s;\n" for r in upstreams
    )
    text, replaced = re.subn(r"(    server 10\.0\.0\.\d+:8000[^\n]*\n)+", servers, text)
    assert replaced == 1, "the example's upstream block changed shape"
    text = text.replace("    listen 80;\n", f"    listen 127.0.0.1:{port};\n")
    return text.replace("    listen [::]:80;\n", "")


@contextmanager
def nginx_in_front(upstreams: list[Replica], workdir: Path) -> Iterator[str]:
    """nginx, in the foreground, proxying to ``upstreams``; its base URL."""
    binary = nginx_binary()
    need(None if binary else "nginx is not installed (apt-get install nginx)")
    assert binary is not None
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    (workdir / "site.conf").write_text(site(upstreams, port), encoding="utf-8")
    # Run by root, nginx's workers would drop to a user that cannot enter the test's directory.
    user = "user root;\n" if os.geteuid() == 0 else ""
    temp = "\n".join(
        f"    {kind}_temp_path {workdir / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    (workdir / "nginx.conf").write_text(
        f"""{user}worker_processes 1;
pid {workdir / "nginx.pid"};
error_log {workdir / "error.log"} warn;
events {{ worker_connections 128; }}
http {{
    access_log {workdir / "access.log"};
{temp}
    include {workdir / "site.conf"};
}}
""",
        encoding="utf-8",
    )
    process = subprocess.Popen(
        [binary, "-p", str(workdir), "-c", str(workdir / "nginx.conf"), "-e", str(workdir / "error.log"),
         "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 15
        while not listening(port):
            error_log = workdir / "error.log"
            if process.poll() is not None or time.monotonic() > deadline:
                problem = error_log.read_text() if error_log.exists() else "no error log"
                raise AssertionError(f"nginx did not start:\n{problem}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=15)


def served_requests(replica: Replica) -> float:
    """How many requests for the spec's routes a replica answered, from its own figures."""
    text = httpx.get(f"{replica.url}/_/metrics", timeout=10).text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("toshokan_requests_total{") and 'face="spec"' in line
    )


def test_a_chapter_read_through_nginx(tmp_path: Path, redis_url: str) -> None:
    config = write_config(
        tmp_path / "toshokan.toml",
        library(tmp_path / "library"),
        f'[server]\ntrusted_proxies = ["127.0.0.1"]\n\n[cluster]\nredis = "{redis_url}"\n',
    )
    with (
        replicas(config, tmp_path / "replicas", 2) as started,
        nginx_in_front(started, tmp_path / "nginx") as base,
        httpx.Client(base_url=base, timeout=10) as reader,
    ):
        manifest = reader.get("/")
        assert manifest.status_code == 200
        assert manifest.json()["sources"] == ["local"]
        assert re.fullmatch(r"[0-9a-f]{32}", manifest.headers["x-request-id"])  # nginx's id
        found = reader.post("/local/search", json=SEARCH).json()["results"]
        assert len(found) == 3
        chapters = reader.get(f"/local/{found[0]['slug']}/chapters").json()
        pages = reader.get(f"/local/{found[0]['slug']}/chapters/{chapters[0]['slug']}").json()
        assert len(pages) == 2
        for page in pages:
            # Built on the address the reader used, as nginx forwarded it.
            assert page.startswith(f"{base}/_/local/"), page
            image = reader.get(page)
            assert image.status_code == 200
            assert image.headers["content-type"].startswith("image/")
            assert len(image.content) > 100
        assert reader.get("/_/ready").json()["status"] == "ready"
        assert reader.get("/_/metrics").status_code == 404  # scraped at each replica instead
        # nginx shared the requests out: each replica answered some.
        assert all(served_requests(replica) > 0 for replica in started)
