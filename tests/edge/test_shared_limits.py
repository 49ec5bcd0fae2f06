"""Replicas share one rate limit through Redis (the configuration for more than one machine)."""

import secrets
import socket

import pytest

pytestmark = pytest.mark.anyio


def redis_available() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.mark.skipif(not redis_available(), reason="no Redis on 127.0.0.1:6379")
async def test_two_replicas_share_the_budget(make_client):
    client_ip = f"2001:db8::{secrets.token_hex(2)}:{secrets.token_hex(2)}"  # a fresh key every run
    limits = {"rate_limit": 4, "storage": "redis://127.0.0.1:6379"}
    async with (
        make_client(client_ip=client_ip, limits=limits) as (first, _),
        make_client(client_ip=client_ip, limits=limits) as (second, _),
    ):
        statuses = []
        for _ in range(3):
            statuses.append((await first.get("/")).status_code)
            statuses.append((await second.get("/")).status_code)
    assert statuses == [200, 200, 200, 200, 429, 429]


@pytest.mark.skipif(not redis_available(), reason="no Redis on 127.0.0.1:6379")
async def test_heads_cost_a_tenth_in_the_shared_budget_too(make_client):
    client_ip = f"2001:db8::{secrets.token_hex(2)}:{secrets.token_hex(2)}"
    limits = {"rate_limit": 2, "storage": "redis://127.0.0.1:6379"}
    async with make_client(client_ip=client_ip, limits=limits) as (client, _):
        heads = [(await client.head("/")).status_code for _ in range(10)]
        gets = [(await client.get("/")).status_code for _ in range(2)]
    assert heads == [200] * 10 and gets == [200, 429]


@pytest.mark.parametrize("section", ["limits", "cluster"])
async def test_a_redis_that_does_not_answer_is_no_500(make_client, section):
    """Counters fall back to this process's memory; health and ping say so, within bounds."""
    # Port 1 (tcpmux): nothing listens there. Not a just-freed ephemeral port, which a
    # client's own connection may take and then talk to itself (PING echoed back).
    port = 1
    url = f"redis://127.0.0.1:{port}"
    settings = (
        {"limits": {"rate_limit": 4, "storage": url}}
        if section == "limits"
        else {
            "limits": {"rate_limit": 4},
            "cluster": {"redis": url},
        }
    )
    async with make_client(**settings) as (client, _):
        statuses = [(await client.get(path)).status_code for path in ("/", "/catalog", "/")]
        health = (await client.get("/catalog/health")).json()
        ping = (await client.get("/catalog/ping")).json()
        over = await client.get("/catalog")
    assert statuses == [200, 200, 200]
    for answer in (health, ping):
        assert answer["detail"].startswith(f"shared state unavailable: Redis at 127.0.0.1:{port} ")
    # Counted all the same, by this process alone.
    assert over.status_code == 429
