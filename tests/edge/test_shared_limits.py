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
