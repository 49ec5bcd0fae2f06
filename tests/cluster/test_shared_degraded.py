"""Redis going away, or never there: per-process state, a detail on health and ping, no 500s,
and ``/_/ready`` reporting it while the host stays ready.

The Redis here is the test's own (`own_redis`), on a spare port, so it can be
stopped while two replicas use it.
"""

import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import httpx
import pytest

from tests.cluster.library import SEARCH, library, write_shared_config
from tests.cluster.replicas import Replica, replicas
from tests.cluster.servers import RedisServer, start_redis
from toshokan.config import HostSettings
from toshokan.core.readiness import Readiness
from toshokan.core.shared.cluster import Cluster

PATHS = ["/", "/local", "/local/health", "/local/ping"]
DETAIL = "shared state unavailable"
RATE_LIMIT = 1000  # on, so every request's count goes through Redis too, yet never reached


def answers(replica: Replica) -> list[httpx.Response]:
    """Every path of ``PATHS`` and a search, each bound to answer within 2 s (no hang)."""
    got = [httpx.get(f"{replica.url}{path}", timeout=2) for path in PATHS]
    got.append(httpx.post(f"{replica.url}/local/search", json=SEARCH, timeout=2))
    return got


def detail(replica: Replica, path: str) -> str | None:
    found: str | None = httpx.get(f"{replica.url}{path}", timeout=2).json().get("detail")
    return found


def redis_readiness(replica: Replica) -> tuple[int, dict[str, object]]:
    """``/_/ready``'s status and what it says of Redis."""
    answer = httpx.get(f"{replica.url}/_/ready", timeout=5)
    return answer.status_code, answer.json()["checks"]["redis"]


def shared_again(replica: Replica) -> bool:
    return detail(replica, "/local/health") is None


def wait_for(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def test_redis_gone_and_back(tmp_path: Path, own_redis: RedisServer) -> None:
    config = write_shared_config(
        tmp_path / "toshokan.toml", library(tmp_path / "library"), own_redis.url(), RATE_LIMIT
    )
    with replicas(config, tmp_path, 2) as started:
        for replica in started:
            assert [a.status_code for a in answers(replica)] == [200] * 5
            assert detail(replica, "/local/health") is None
            status, redis = redis_readiness(replica)
            assert status == 200 and redis["status"] == "up" and redis["required"] is False
        own_redis.stop()
        for replica in started:
            for _ in range(3):
                assert [a.status_code for a in answers(replica)] == [200] * 5
            for path in ("/local/health", "/local/ping"):
                assert DETAIL in (detail(replica, path) or "")
            # Reported, but still ready: a balancer must not take out every replica at once.
            status, redis = redis_readiness(replica)
            assert status == 200 and redis["status"] == "down"
            assert DETAIL in str(redis["detail"])
        # Back on the same port: each replica finds it again on its own.
        start_redis(own_redis.workdir or tmp_path / "again", own_redis.port)
        for replica in started:
            assert wait_for(partial(shared_again, replica), 10)
            assert redis_readiness(replica)[1]["status"] == "up"
            assert [a.status_code for a in answers(replica)] == [200] * 5
        outputs = [replica.stop() for replica in started]
    for output in outputs:
        # One line when it went, one when it came back: not one per request.
        assert output.count("does not answer") == 1, output
        assert output.count("answers again") == 1, output


def test_redis_unreachable_at_start_up(tmp_path: Path, own_redis: RedisServer) -> None:
    url = own_redis.url()
    own_redis.stop()
    config = write_shared_config(
        tmp_path / "toshokan.toml", library(tmp_path / "library"), url, RATE_LIMIT
    )
    with replicas(config, tmp_path, 1) as (replica,):
        assert [a.status_code for a in answers(replica)] == [200] * 5
        assert DETAIL in (detail(replica, "/local/ping") or "")
        assert "Redis at 127.0.0.1" in (detail(replica, "/local/health") or "")
        status, redis = redis_readiness(replica)
        assert status == 200 and redis["status"] == "down"


@pytest.mark.anyio
async def test_each_redis_is_reported_on_its_own(redis_url: str, own_redis: RedisServer) -> None:
    """A `[limits] storage` Redis other than the cluster's is a check of its own, also optional."""
    cluster = Cluster(
        HostSettings(cluster={"redis": redis_url}, limits={"storage": own_redis.url()})
    )
    readiness = Readiness()
    cluster.add_checks(readiness)
    await cluster.startup()
    try:
        own_redis.stop()
        ready, checks = await readiness.report()
    finally:
        await cluster.shutdown()
    assert ready
    assert checks["redis"]["status"] == "up"
    assert checks["limits storage"]["status"] == "down"
    assert checks["limits storage"]["required"] is False
