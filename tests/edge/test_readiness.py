"""/_/ready: 200 while every required check passes, 503 when one fails or hangs; each
check's state in the body."""

import asyncio

import pytest

from toshokan.core import readiness

pytestmark = pytest.mark.anyio


async def up() -> None:
    pass


async def refused() -> None:
    raise ConnectionRefusedError("Error 111 connecting to 127.0.0.1:6379")


async def hangs() -> None:
    await asyncio.sleep(60)


async def test_ready_with_no_checks(make_host):
    async with make_host() as host:
        answer = await host.client.get("/_/ready")
    assert answer.status_code == 200
    assert answer.json() == {"status": "ready", "checks": {}}
    assert answer.headers["cache-control"] == "no-store"


async def test_a_required_dependency_down_is_503(make_host):
    async with make_host() as host:
        host.core.readiness.add("postgresql", up)
        host.core.readiness.add("redis", refused)
        answer = await host.client.get("/_/ready")
    assert answer.status_code == 503
    body = answer.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["postgresql"]["status"] == "up"
    redis = body["checks"]["redis"]
    assert redis["status"] == "down" and redis["required"] is True
    assert redis["detail"] == "ConnectionRefusedError: Error 111 connecting to 127.0.0.1:6379"


async def test_an_optional_dependency_down_is_reported_but_ready(make_host):
    async with make_host() as host:
        host.core.readiness.add("redis", refused, required=False)
        answer = await host.client.get("/_/ready")
    assert answer.status_code == 200
    assert answer.json()["checks"]["redis"]["status"] == "down"


async def test_a_check_that_hangs_is_down_within_its_bound(make_host, monkeypatch):
    monkeypatch.setattr(readiness, "CHECK_SECONDS", 0.2)
    async with make_host() as host:
        host.core.readiness.add("redis", hangs)
        started = asyncio.get_running_loop().time()
        answer = await host.client.get("/_/ready")
        took = asyncio.get_running_loop().time() - started
    assert answer.status_code == 503
    assert answer.json()["checks"]["redis"]["detail"] == "no answer within 0.2 s"
    assert took < 2


async def test_no_source_can_take_the_name(make_host):
    from toshokan.core.face import names_of
    from toshokan.faces import FACES

    assert {"ready", "metrics"} <= names_of(FACES)
