"""The shared database going away while the host runs: a 502 for the requests it fails, never
a 500, ``/_/ready`` 503 naming it, a source's health and ping as usual, and back to normal once
it answers again, without a restart."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.helpers.databases import emptied
from toshokan.faces.kosync import PREFIX as KOSYNC
from toshokan.sources.local import LocalLibrary, LocalSettings
from toshokan.testing import ServedHost, serve

pytestmark = pytest.mark.anyio

KOREADER = {
    "x-auth-user": "anyone",
    "x-auth-key": "anything",
    "accept": "application/vnd.koreader.v1+json",
}
DOCUMENT = "0123456789abcdef0123456789abcdef"


@contextmanager
def administered(url: str) -> Iterator[tuple[psycopg.Connection, str]]:
    """A superuser's connection to the server holding ``url``'s database, and its name."""
    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
        try:
            yield admin, name
        finally:
            admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")


def drop_connections(admin: psycopg.Connection, name: str) -> None:
    """What a restart does to the host's connections: the server closes every one."""
    admin.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
        (name,),
    )


async def progress(host: ServedHost) -> tuple[int, dict[str, object]]:
    answer = await host.client.get(f"{KOSYNC}/syncs/progress/{DOCUMENT}", headers=KOREADER)
    return answer.status_code, answer.json()


async def database_readiness(host: ServedHost) -> tuple[int, dict[str, Any]]:
    """``/_/ready``'s status and what it says of PostgreSQL."""
    answer = await host.client.get("/_/ready")
    return answer.status_code, answer.json()["checks"]["postgresql"]


async def test_a_database_gone_is_a_502_and_back_without_a_restart(
    module_database_url: str, tmp_path: Path
) -> None:
    url = emptied(module_database_url)
    (tmp_path / "library").mkdir()
    async with serve(
        LocalLibrary,
        LocalSettings(root=tmp_path / "library", watch=False),
        slug="local",
        data_dir=tmp_path / "data",
        cluster={"database": url},
    ) as host:
        update = {
            "document": DOCUMENT,
            "progress": "/body/p[3]",
            "percentage": 0.3,
            "device": "Kobo",
            "device_id": "kobo-1",
        }
        put = await host.client.put(f"{KOSYNC}/syncs/progress", json=update, headers=KOREADER)
        assert put.status_code == 200
        with administered(url) as (admin, name):
            drop_connections(admin, name)  # a restart: the pooled connections are dead
            status, kept = await progress(host)
            assert status == 200 and kept["progress"] == "/body/p[3]"

            status, database = await database_readiness(host)
            assert status == 200 and database["status"] == "up" and database["required"] is True

            admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
            drop_connections(admin, name)  # down: no connection is possible any more
            status, body = await progress(host)
            assert status == 502
            assert body["error"]["code"] == "UPSTREAM_ERROR"  # type: ignore[index]
            # Unready, saying why, so a balancer sends readers to a replica that can serve.
            status, database = await database_readiness(host)
            assert status == 503 and database["status"] == "down"
            assert "PostgreSQL did not answer" in database["detail"]
            assert "postgres@" not in database["detail"]  # the answer is public: no URL
            # A source's health and ping need no database: they answer as usual.
            health = await host.client.get("/local/health")
            ping = await host.client.get("/local/ping")
            assert health.status_code == 200 and health.json()["status"] == "ok"
            assert ping.status_code == 200 and ping.json()["status"] == "ok"

            admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
            status, kept = await progress(host)
            assert status == 200 and kept["progress"] == "/body/p[3]"
            assert (await database_readiness(host))[0] == 200
