"""Slow, idle, oversized and numerous connections are bounded by the running server."""

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers.serving import running_host
from toshokan.sources.local.demo import write_demo_library

BOUNDS = {
    "TOSHOKAN_SERVER__TRUSTED_PROXIES": "[]",  # the test client is an ordinary client
    "TOSHOKAN_SERVER__HEADER_TIMEOUT": "1",
    "TOSHOKAN_SERVER__MAX_CONNECTIONS_PER_CLIENT": "4",
    "TOSHOKAN_LIMITS__MAX_HEADER_BYTES": "4096",
}


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("bounded")
    (root / "library").mkdir()
    env = {**BOUNDS, "TOSHOKAN_HOST__DATA_DIR": str(root / "data")}
    args = ["--library", str(root / "library"), "--log-level", "warning"]
    with running_host(args, "/local/health", env=env, timeout=60) as base:
        yield base


def connect(base: str) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_slow_headers_are_cut_at_the_deadline(host: str) -> None:
    with connect(host) as sock:
        sock.sendall(b"GET /local HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 408")
    assert b'"INVALID_REQUEST"' in answer
    assert time.monotonic() - started < 5


def test_idle_connections_are_closed(host: str) -> None:
    with connect(host) as sock:
        started = time.monotonic()
        read_all(sock)
    assert time.monotonic() - started < 5


def test_oversized_head_is_431_without_waiting_for_its_end(host: str) -> None:
    with connect(host) as sock:
        sock.sendall(b"GET /local HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20_000)
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 431")


def error_object(answer: bytes) -> tuple[int, dict]:
    """The status and the JSON body of a whole answer, which must be the spec's Error object."""
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    assert headers["content-type"] == "application/json", answer[:300]
    assert int(headers["content-length"]) == len(body)
    error = json.loads(body)["error"]
    assert set(error) == {"code", "message"} and error["code"] == "INVALID_REQUEST"
    return int(lines[0].split()[1]), error


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /local/search?q=" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /local?q=" + b"b" * 6_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",  # under 64 KB
    ],
    ids=["100 KB", "over the cap"],
)
def test_an_address_too_long_is_414_with_the_error_object(host: str, request_bytes: bytes) -> None:
    with connect(host) as sock:
        sock.sendall(request_bytes)
        status, error = error_object(read_all(sock))
    assert status == 414
    assert "4096 bytes" in error["message"]


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /lo cal HTTP/1.1\r\nHost: x\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",  # TLS spoken to plain HTTP
        b"GET / HTTP/1.1\r\nBad Header\r\n\r\n",
    ],
    ids=["space in the path", "TLS hello", "header without a colon"],
)
def test_what_is_not_http_is_400_with_the_error_object(host: str, request_bytes: bytes) -> None:
    with connect(host) as sock:
        sock.sendall(request_bytes)
        status, _ = error_object(read_all(sock))
    assert status == 400


def test_one_client_holds_a_bounded_number_of_connections(host: str) -> None:
    held = [connect(host) for _ in range(4)]
    try:
        with connect(host) as extra:
            refused = read_all(extra)
    finally:
        for sock in held:
            sock.close()
    assert refused.startswith(b"HTTP/1.1 429")
    assert b"retry-after: 1" in refused
    time.sleep(0.2)  # the server sees the held connections go
    assert httpx.get(f"{host}/local/health").status_code == 200


def test_complete_requests_still_pass(host: str) -> None:
    with httpx.Client(base_url=host) as client:
        for _ in range(5):
            assert client.get("/local").status_code == 200


def test_workers_serve_and_stop_cleanly(tmp_path: Path) -> None:
    # A library to index on a first start: the workers must not race on its index.
    write_demo_library(tmp_path / "library", series=6, chapters=2, pages=1)
    env = {"TOSHOKAN_HOST__DATA_DIR": str(tmp_path / "data")}
    args = ["--library", str(tmp_path / "library"), "--workers", "2"]
    with (
        running_host(args, "/local/health", env=env, timeout=90) as base,
        httpx.Client(base_url=base) as client,
    ):
        statuses = {client.get("/local").status_code for _ in range(20)}
    assert statuses == {200}
