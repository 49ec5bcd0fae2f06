"""A source that requires authentication is asked once for the whole host whether some
credentials pass, not once a replica: two hosts sharing one Redis share the decision.

The two hosts are in-process, each with its own Redis connections and data directory, as two
replicas have; the Redis is real.
"""

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from tests.helpers.catalog import SECRETS, Catalog
from toshokan.testing import ServedHost, serve

pytestmark = pytest.mark.anyio
LOCKED = {"auth": "api_key", "required": True, "verify_delay": 0.2}
TITLE = "/catalog/title-000"


@pytest.fixture
async def replicas(tmp_path: Path, redis_url: str) -> AsyncIterator[list[ServedHost]]:
    async with AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(
                serve(
                    Catalog,
                    LOCKED,
                    slug="catalog",
                    data_dir=tmp_path / f"replica-{index}",
                    host={"secret": "one-secret-for-every-replica"},
                    cluster={"redis": redis_url},
                )
            )
            for index in range(2)
        ]


def verified(hosts: list[ServedHost]) -> int:
    """How many times the source was asked to check credentials, on every host together."""
    return sum(host.source("catalog").calls.get("verify", 0) for host in hosts)


async def test_a_key_is_checked_once_for_every_replica(replicas: list[ServedHost]) -> None:
    key = {"X-API-Key": SECRETS["apiKey"]}
    first = await replicas[0].client.get(TITLE, headers=key)
    second = await replicas[1].client.get(TITLE, headers=key)
    assert first.status_code == second.status_code == 200
    assert verified(replicas) == 1


async def test_a_key_asked_on_two_replicas_at_once_is_checked_once(
    replicas: list[ServedHost],
) -> None:
    key = {"X-API-Key": SECRETS["apiKey"]}
    answers = await asyncio.gather(*(host.client.get(TITLE, headers=key) for host in replicas))
    assert [answer.status_code for answer in answers] == [200, 200]
    assert verified(replicas) == 1


async def test_a_refusal_is_shared_too(replicas: list[ServedHost]) -> None:
    wrong = {"X-API-Key": "not-the-key"}
    answers = [await host.client.get(TITLE, headers=wrong) for host in replicas]
    assert [answer.status_code for answer in answers] == [401, 401]
    assert {answer.json()["error"]["code"] for answer in answers} == {"INVALID_CREDENTIALS"}
    assert verified(replicas) == 1
