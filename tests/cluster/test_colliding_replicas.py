"""Colliding series names arriving in opposite orders on two real replicas sharing PostgreSQL:
both hand out the same slugs, since the first claim anywhere holds everywhere.

Each replica is a `toshokan serve` process with its own data directory and, here, its own
copy of the library (``TOSHOKAN_SOURCES__LOCAL__ROOT``), so that one copy gets ``Re Zero``
first and the other ``Re-Zero``, as replicas following a folder kept in sync can.
"""

import time
from pathlib import Path
from typing import Any

import httpx

from tests.cluster.library import SEARCH, write_config
from tests.cluster.replicas import Replica, replicas, start_replica
from tests.sources.local.helpers import cbz

COLLIDING = ("Re Zero", "Re-Zero")
#: Seconds the library's watcher has to index a series added while the replica runs.
WATCHED_WITHIN = 15


def series(replica: Replica) -> dict[str, str]:
    """Title -> slug of every series the replica lists."""
    answer = httpx.post(f"{replica.url}/local/search", json=SEARCH, timeout=10)
    assert answer.status_code == 200
    return {result["title"]: result["slug"] for result in answer.json()["results"]}


def listed_by_all(started: list[Replica], count: int) -> list[dict[str, str]]:
    deadline = time.monotonic() + WATCHED_WITHIN
    while True:
        seen = [series(replica) for replica in started]
        if all(len(found) == count for found in seen) or time.monotonic() > deadline:
            return seen
        time.sleep(0.2)


def chapters(replica: Replica, slug: str) -> Any:
    return httpx.get(f"{replica.url}/local/{slug}/chapters", timeout=10).json()


def test_colliding_names_in_opposite_orders_get_one_slug_on_every_replica(
    tmp_path: Path, postgres_url: str
) -> None:
    roots = [tmp_path / f"library-{index}" for index in range(2)]
    for root, name in zip(roots, COLLIDING, strict=True):
        cbz(root / name / "Ch.1.cbz")
    config = write_config(
        tmp_path / "toshokan.toml",
        roots[0],
        f'\n[cluster]\ndatabase = "{postgres_url}"\n',
    )
    # One public address, as behind a load balancer, so links are alike too.
    public = {"TOSHOKAN_HOST__PUBLIC_URL": "https://comics.example.org"}
    # One after the other, so each name is claimed by the replica that saw it first.
    with replicas(config, tmp_path / "first", 1, env=public) as (first,):
        env = {**public, "TOSHOKAN_SOURCES__LOCAL__ROOT": str(roots[1])}
        second = start_replica(config, tmp_path / "second" / "replica-0", env=env)
        try:
            before = listed_by_all([first, second], 1)
            assert before[0] == {"Re Zero": "re-zero"}
            # The bare slug is the first replica's claim, though this one's copy lacks the name.
            assert list(before[1]) == ["Re-Zero"] and before[1]["Re-Zero"].startswith("re-zero-")
            # Then each copy gets the name the other saw first.
            for root, other in zip(roots, reversed(COLLIDING), strict=True):
                cbz(root / other / "Ch.1.cbz")
            seen = listed_by_all([first, second], 2)
            assert seen[0] == seen[1], seen
            assert seen[0]["Re Zero"] == "re-zero"
            assert seen[0]["Re-Zero"].startswith("re-zero-")
            for slug in seen[0].values():
                assert chapters(first, slug) == chapters(second, slug)
        finally:
            assert "Traceback" not in second.stop()
