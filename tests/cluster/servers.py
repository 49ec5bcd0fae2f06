"""Redis servers for the replica tests: whether one listens, and starting one of a test's own."""

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.serving import free_port
from tests.sources.opds.live import need

REDIS_PORT = 6379
POSTGRES_PORT = 5432


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_listening(port: int, timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if listening(port):
            return True
        time.sleep(0.05)
    return False


@dataclass
class RedisServer:
    """A ``redis-server`` on a loopback port; ``owned`` when this run started it."""

    port: int
    owned: bool
    workdir: Path | None = None

    def url(self, database: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        """Shut it down without saving (only a server this run started)."""
        if self.owned and listening(self.port):
            subprocess.run(
                ["redis-cli", "-p", str(self.port), "shutdown", "nosave"],
                capture_output=True,
                timeout=10,
                check=False,
            )
            deadline = time.monotonic() + 10
            while listening(self.port) and time.monotonic() < deadline:
                time.sleep(0.05)


def start_redis(workdir: Path, port: int | None = None) -> RedisServer:
    """A new ``redis-server`` of this run's own, on ``port`` or a free one."""
    need(None if shutil.which("redis-server") else "redis-server is not installed")
    port = port or free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            "redis-server",
            "--daemonize", "yes",
            "--bind", "127.0.0.1",
            "--port", str(port),
            "--save", "",
            "--appendonly", "no",
            "--dir", str(workdir),
            "--pidfile", str(workdir / "redis.pid"),
            "--logfile", str(workdir / "redis.log"),
        ],
        check=True,
        capture_output=True,
        timeout=15,
    )  # fmt: skip
    if not wait_listening(port):
        pytest.fail(f"redis-server on {port} did not start")
    return RedisServer(port, owned=True, workdir=workdir)
