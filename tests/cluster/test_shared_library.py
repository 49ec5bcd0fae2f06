"""Replicas of one library folder sharing Redis: one set of answers and hashes, a change shows on
every one, limits count once."""

import time
from pathlib import Path
from typing import Any

import httpx
import redis

from tests.cluster.library import SEARCH, answers, library, write_shared_config
from tests.cluster.replicas import Replica, replicas
from tests.sources.local.helpers import cbz

READY = "/local/health"


def titles(replica: Replica) -> list[str]:
    answer = httpx.post(f"{replica.url}/local/search", json=SEARCH, timeout=5)
    assert answer.status_code == 200
    return [result["title"] for result in answer.json()["results"]]


def manifest_and_configuration(replica: Replica) -> tuple[dict[str, Any], dict[str, Any]]:
    manifest = httpx.get(f"{replica.url}/", timeout=5)
    configuration = httpx.get(f"{replica.url}/local", timeout=5)
    assert manifest.status_code == configuration.status_code == 200
    return manifest.json(), configuration.json()


def test_a_library_change_shows_on_every_replica_within_5_s(tmp_path: Path, redis_url: str) -> None:
    root = library(tmp_path / "library")
    config = write_shared_config(tmp_path / "toshokan.toml", root, redis_url)
    with replicas(config, tmp_path, 3) as started:
        before = [titles(r) for r in started]  # cached on every replica now
        assert before == [["Blue Harbour", "Green Hill", "Red Lantern"]] * 3
        cbz(root / "Amber Road" / "Amber Road c001.cbz", pages=2)
        added = time.monotonic()
        late = set(range(3))
        while late and time.monotonic() - added < 5:
            late = {n for n in late if "Amber Road" not in titles(started[n])}
            time.sleep(0.1)
        assert not late, f"replicas {sorted(late)} still answer without the new series"
        # And they stay alike: no replica keeps serving an answer from before the change.
        assert len({tuple(titles(r)) for r in started}) == 1


def test_replicas_and_a_workers_host_answer_alike(tmp_path: Path, redis_url: str) -> None:
    config = write_shared_config(
        tmp_path / "toshokan.toml", library(tmp_path / "library"), redis_url
    )
    with (
        replicas(config, tmp_path / "replicas", 3) as started,
        replicas(config, tmp_path / "workers", 1, workers=2) as (workers_host,),
    ):
        # Each asked twice: once computed (here or by another), once from the shared cache.
        seen = [answers(host.url) for host in [*started, workers_host] for _ in range(2)]
        described = [manifest_and_configuration(host) for host in [*started, workers_host]]
    assert len(seen[0][0]["results"]) == 3
    assert all(one == seen[0] for one in seen)
    assert seen[0][2][0].startswith("https://comics.example.org/_/local/pages/")
    # One host to its readers: one manifest hash, one source configuration hash.
    manifest, configuration = described[0]
    assert manifest["hash"] and manifest["manifest"]["local"]["hash"] == configuration["hash"]
    assert all(one == described[0] for one in described)


def test_rate_limits_count_once_for_replicas_and_workers(tmp_path: Path, redis_url: str) -> None:
    config = write_shared_config(
        tmp_path / "toshokan.toml", library(tmp_path / "library"), redis_url, rate_limit=6
    )
    with (
        # Ready when health answers, which is never rate limited.
        replicas(config, tmp_path / "replicas", 2, ready_path=READY) as (first, second),
        replicas(config, tmp_path / "workers", 1, workers=2, ready_path=READY) as (workers_host,),
    ):
        statuses = [
            httpx.get(f"{host.url}/local", timeout=5).status_code
            for _ in range(3)
            for host in (first, second, workers_host)
        ]
    # 6 a minute for the address, whichever process of which replica answers.
    assert statuses == [200] * 6 + [429] * 3


def test_a_replica_scans_after_the_one_holding_the_lease(tmp_path: Path, redis_url: str) -> None:

    lease = redis.Redis.from_url(redis_url)
    lease.set("toshokan:lease:local-scan:local", "another replica", ex=60)  # mid-scan elsewhere
    config = write_shared_config(
        tmp_path / "toshokan.toml", library(tmp_path / "library"), redis_url
    )
    with replicas(config, tmp_path, 1, ready_path=READY) as (replica,):
        health = httpx.get(f"{replica.url}{READY}", timeout=5).json()
        assert "waiting for another process" in health["detail"]
        assert titles(replica) == []
        lease.delete("toshokan:lease:local-scan:local")  # that scan is over
        deadline = time.monotonic() + 5
        while not titles(replica) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert titles(replica) == ["Blue Harbour", "Green Hill", "Red Lantern"]
    lease.close()


def test_a_replica_waiting_for_the_lease_stops_at_once(tmp_path: Path, redis_url: str) -> None:

    lease = redis.Redis.from_url(redis_url)
    lease.set("toshokan:lease:local-scan:local", "another replica", ex=60)
    config = write_shared_config(
        tmp_path / "toshokan.toml", library(tmp_path / "library"), redis_url
    )
    with replicas(config, tmp_path, 1, ready_path=READY) as (replica,):
        began = time.monotonic()
        replica.stop(timeout=10)
        assert time.monotonic() - began < 5
        assert "Application shutdown complete" in replica.output()
    lease.close()
