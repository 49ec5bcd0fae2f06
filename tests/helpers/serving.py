"""Running `toshokan serve` as a separate process, the way a user does, for tests that need it."""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "toshokan", "serve", *args]


@contextmanager
def running_host(
    args: Sequence[str], ready_path: str, env: Mapping[str, str] | None = None, timeout: float = 60
) -> Iterator[str]:
    """Start the host on a free port, wait until ``ready_path`` answers 200, yield its base URL.

    On exit the process is terminated and must not have printed a traceback.
    """
    port = free_port()
    process = subprocess.Popen(
        serve_command("--port", str(port), *args),
        env={**os.environ, **(env or {})},
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise AssertionError(
                    f"the host exited early:\n{process.stdout.read() if process.stdout else ''}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(f"the host was not ready within {timeout:g} s")
            try:
                if httpx.get(f"{base}{ready_path}", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            output, _ = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
    assert "Traceback" not in output, output
