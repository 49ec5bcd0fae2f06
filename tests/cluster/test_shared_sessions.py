"""Readers' upstream sign-ins and the scan lease, shared through Redis by separate processes.

Each "process" here is a :class:`Cluster` of its own, with its own Redis
connections, as two replicas have; the Redis is real.
"""

import asyncio
from pathlib import Path

import httpx
import pytest
import redis

from tests.cluster.servers import RedisServer
from tests.helpers.catalog import SECRETS, Catalog, CatalogSettings
from toshokan.config import HostSettings
from toshokan.core.shared.cluster import Cluster
from toshokan.sdk import AuthType, Credentials, HostServices, RequestContext
from toshokan.sdk.auth import headers_for
from toshokan.sources.opds.accounts import Accounts
from toshokan.sources.opds.settings import Settings
from toshokan.testing import serve_host

pytestmark = pytest.mark.anyio
SECRET = b"one-secret-for-every-replica"
SIGN_IN = Credentials(type=AuthType.BASIC, username="mika", password="correct horse battery")


def replica(tmp_path: Path, redis_url: str, secret: bytes = SECRET) -> tuple[Cluster, HostServices]:
    services = HostServices(user_agent="t", data_dir=tmp_path, secret=secret)
    cluster = Cluster(HostSettings(cluster={"redis": redis_url}))
    cluster.share_services(services)
    return cluster, services


def reader_accounts(services: HostServices) -> Accounts:
    settings = Settings(url="https://komga.example/opds/v1.2/catalog", auth="basic")
    return Accounts(settings, services, "komga")


async def test_a_readers_link_is_served_by_another_replica(tmp_path: Path, redis_url: str) -> None:
    (one, first), (two, second) = replica(tmp_path, redis_url), replica(tmp_path, redis_url)
    await one.startup()
    await two.startup()
    try:
        signed_in = RequestContext(auth=headers_for(SIGN_IN))
        account = await reader_accounts(first).of(signed_in)  # the replica that made the link
        found = await reader_accounts(second).named(account.key)  # the one the link reaches
        assert found is not None
        assert found.auth is not None
        assert found.key == account.key
        assert await reader_accounts(second).named("r" + "0" * 32) is None
    finally:
        await one.shutdown()
        await two.shutdown()
    # What Redis holds names neither the reader nor the password.
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    kept = list(client.keys("*secret*"))
    stored = "".join(str(client.get(key)) for key in kept)
    client.close()
    assert len(kept) == 1
    assert "mika" not in stored
    assert "horse" not in stored


async def test_another_secret_opens_nothing(tmp_path: Path, redis_url: str) -> None:
    (one, first) = replica(tmp_path, redis_url)
    (two, second) = replica(tmp_path, redis_url, secret=b"another-secret")
    try:
        account = await reader_accounts(first).of(RequestContext(auth=headers_for(SIGN_IN)))
        assert await reader_accounts(second).named(account.key) is None
    finally:
        await one.shutdown()
        await two.shutdown()


async def test_one_scanner_at_a_time(tmp_path: Path, redis_url: str) -> None:
    (one, first), (two, second) = replica(tmp_path, redis_url), replica(tmp_path, redis_url)
    running, most = 0, 0

    async def scan(services: HostServices) -> None:
        nonlocal running, most
        async with services.exclusive("local-scan:local"):
            running += 1
            most = max(most, running)
            await asyncio.sleep(0.3)
            running -= 1

    try:
        await asyncio.gather(scan(first), scan(second), scan(first))
    finally:
        await one.shutdown()
        await two.shutdown()
    assert most == 1


async def test_a_scan_goes_ahead_when_redis_is_gone(tmp_path: Path, own_redis: RedisServer) -> None:
    cluster, services = replica(tmp_path, own_redis.url())
    await cluster.startup()
    try:
        async with services.exclusive("local-scan:local"):
            own_redis.stop()
            # Held by a process whose Redis went away: the next scan does not wait for it.
            async with asyncio.timeout(3), services.exclusive("local-scan:local"):
                pass
        assert "shared state unavailable" in (cluster.detail() or "")
    finally:
        await cluster.shutdown()


async def test_an_opds_readers_session_is_signed_in_once_for_the_host(
    tmp_path: Path, redis_url: str
) -> None:
    """A `session` source's cookies, got for a reader's Basic credentials on one replica,
    serve that reader on another without signing in again."""
    spec = (Catalog, CatalogSettings(auth=AuthType.SESSION, required=True))
    basic = httpx.BasicAuth(SECRETS["username"], SECRETS["password"])
    async with (
        serve_host(
            {"catalog": spec}, data_dir=tmp_path / "one", cluster={"redis": redis_url}
        ) as one,
        serve_host(
            {"catalog": spec}, data_dir=tmp_path / "two", cluster={"redis": redis_url}
        ) as two,
    ):
        for served in (one, two, one):
            answer = await served.client.get("/_/opds/catalog", auth=basic)
            assert answer.status_code == 200
        sources = [s.core.sources.get("catalog").source for s in (one, two)]
    assert [s.calls.get("verify", 0) for s in sources if isinstance(s, Catalog)] == [1, 0]
