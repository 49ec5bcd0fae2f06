"""Whether the host has readers, remembered by every replica and forgotten by all of them when
the readers change on one: two hosts sharing one PostgreSQL and one Redis.

The two hosts are in-process, each with its own Redis connections and data directory, as two
replicas have; the Redis and the PostgreSQL are real.
"""

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from tests.helpers.hosts import add_reader
from tests.helpers.libraries import DemoLibrary
from toshokan.core.readers import gate
from toshokan.sources.local import LocalLibrary, LocalSettings
from toshokan.testing import ServedHost, serve_host

pytestmark = pytest.mark.anyio
#: Well beyond the shared generations' sync: a replica that sees the change learnt it from Redis.
WAIT_SECONDS = 20


@pytest.fixture
async def replicas(
    tmp_path: Path,
    redis_url: str,
    postgres_url: str,
    demo_library: DemoLibrary,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[list[ServedHost]]:
    # Remembered for an hour: only the shared generation can make a replica ask again.
    monkeypatch.setattr(gate, "READERS_SECONDS", 3600.0)
    root = demo_library(series=1, chapters=1, pages=2)
    async with AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(
                serve_host(
                    {"local": (LocalLibrary, LocalSettings(root=root, watch=False))},
                    data_dir=tmp_path / f"replica-{index}",
                    host={"secret": "one-secret-for-every-replica"},
                    limits={"rate_limit": 0},
                    cluster={"redis": redis_url, "database": postgres_url},
                )
            )
            for index in range(2)
        ]


async def refused_within(host: ServedHost, path: str, seconds: float) -> bool:
    """Whether ``path`` is refused to a client without credentials before ``seconds`` pass."""
    loop = asyncio.get_running_loop()
    until = loop.time() + seconds
    while loop.time() < until:
        if (await host.client.get(path)).status_code == 401:
            return True
        await asyncio.sleep(0.1)
    return False


async def test_a_reader_added_on_one_replica_closes_every_replica(
    replicas: list[ServedHost],
) -> None:
    one, two = replicas
    for host in replicas:  # both remember: no readers, the host is open
        assert (await host.client.get("/_/opds/local")).status_code == 200
    await add_reader(one, "ayumi", "correct horse")
    assert (await one.client.get("/_/opds/local")).status_code == 401
    assert await refused_within(two, "/_/opds/local", WAIT_SECONDS)
    signed_in = await two.client.get("/_/opds/local", auth=("ayumi", "correct horse"))
    assert signed_in.status_code == 200


async def test_a_reader_added_by_the_command_closes_every_replica(
    replicas: list[ServedHost], tmp_path: Path, redis_url: str, postgres_url: str
) -> None:
    """``toshokan readers add``, another process, raises the shared generation too."""
    for host in replicas:
        assert (await host.client.get("/_/opds/local")).status_code == 200
    config = tmp_path / "toshokan.toml"
    config.write_text(
        f'[host]\ndata_dir = "{tmp_path / "command"}"\n'
        f'[cluster]\ndatabase = "{postgres_url}"\nredis = "{redis_url}"\n'
    )
    command = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "toshokan"),
        *("--config", str(config), "readers", "add", "ayumi", "--password", "correct horse"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await command.communicate()
    assert command.returncode == 0, output.decode()
    for host in replicas:
        assert await refused_within(host, "/_/opds/local", WAIT_SECONDS)
