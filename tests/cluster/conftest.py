"""Redis and PostgreSQL for the replica tests: the ones running here, or ones started for the run.

A Redis or PostgreSQL already listening on its usual port is used as it is and
left running; otherwise one is started for the session (``redis-server
--daemonize``, ``pg_ctlcluster``) and stopped afterwards. Where neither runs nor
can be started the tests skip, or fail when live servers are required
(``TOSHOKAN_LIVE_SERVERS=required``, as in CI).

Tests never share state: each gets a Redis database number of its own (claimed
in database 0, flushed and released afterwards) and a PostgreSQL database with
a unique name (dropped afterwards), so parallel runs on one machine do not collide.
"""

import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.opds_adapter.live import need
from tests.serving import free_port

REDIS_PORT = 6379
POSTGRES_PORT = 5432
#: Redis databases 1-15 are handed to tests; 0 holds the claims.
REDIS_DATABASES = range(1, 16)
CLAIM_SECONDS = 3600


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


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """The Redis on 6379 when one listens, else one started for this session on a free port."""
    if listening(REDIS_PORT):
        yield RedisServer(REDIS_PORT, owned=False)
        return
    server = start_redis(tmp_path_factory.mktemp("redis"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """``redis://`` URL of a database number this test alone uses; flushed before and after."""
    import redis

    claims = redis.Redis(port=redis_server.port, db=0, socket_timeout=5)
    token = secrets.token_hex(8)
    database = next(
        (
            number
            for number in REDIS_DATABASES
            if claims.set(f"toshokan-tests:database:{number}", token, nx=True, ex=CLAIM_SECONDS)
        ),
        None,
    )
    if database is None:
        pytest.fail("every Redis test database (1-15) is claimed; too many runs at once")
    own = redis.Redis(port=redis_server.port, db=database, socket_timeout=5)
    own.flushdb()
    try:
        yield redis_server.url(database)
    finally:
        own.flushdb()
        own.close()
        if claims.get(f"toshokan-tests:database:{database}") == token.encode():
            claims.delete(f"toshokan-tests:database:{database}")
        claims.close()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis this test alone owns, on a spare port: it may stop it (``.stop()``) to see failure."""
    server = start_redis(tmp_path / "own-redis")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[int]:
    """The port of a PostgreSQL that accepts ``postgres`` without a password (trust auth).

    Started with ``pg_ctlcluster`` when none listens on 5432, and stopped again afterwards.
    """
    if listening(POSTGRES_PORT):
        yield POSTGRES_PORT
        return
    versions = sorted(Path("/etc/postgresql").glob("*")) if Path("/etc/postgresql").is_dir() else []
    need(
        None
        if versions and shutil.which("pg_ctlcluster")
        else "PostgreSQL is not installed (pg_ctlcluster)"
    )
    command = ["pg_ctlcluster", "--skip-systemctl-redirect", versions[-1].name, "main"]
    subprocess.run([*command, "start"], check=True, capture_output=True, timeout=60)
    if not wait_listening(POSTGRES_PORT, timeout=30):
        pytest.fail("PostgreSQL did not start")
    try:
        yield POSTGRES_PORT
    finally:
        subprocess.run([*command, "stop"], check=False, capture_output=True, timeout=60)


@pytest.fixture
def postgres_url(postgres_server: int) -> Iterator[str]:
    """``postgresql://`` URL of a database made for this test alone, dropped afterwards."""
    name = f"toshokan_test_{secrets.token_hex(6)}"
    connection = ["-h", "127.0.0.1", "-p", str(postgres_server), "-U", "postgres"]
    subprocess.run(["createdb", *connection, name], check=True, capture_output=True, timeout=30)
    try:
        yield f"postgresql://postgres@127.0.0.1:{postgres_server}/{name}"
    finally:
        subprocess.run(
            ["dropdb", *connection, "--force", "--if-exists", name],
            check=False,
            capture_output=True,
            timeout=30,
        )
