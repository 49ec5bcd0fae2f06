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
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.servers import (
    REDIS_PORT,
    RedisServer,
    listening,
    start_redis,
)

#: Redis databases 1-15 are handed to tests; 0 holds the claims.
REDIS_DATABASES = range(1, 16)
#: A claim outlives any one test; a run killed mid-test frees its database by then.
CLAIM_SECONDS = 600


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
