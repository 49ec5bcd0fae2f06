"""The job engines behind one interface: keyed jobs queued once, failures retried with backoff,
cancelling, on APScheduler over SQLite and on procrastinate over PostgreSQL."""

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.helpers.databases import open_for
from toshokan.core.jobs import Backoff, Jobs, Task

pytestmark = pytest.mark.anyio


class Calls:
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def record(self, name: str) -> None:
        self.seen.append(name)

    async def fail_once(self, name: str) -> None:
        self.seen.append(name)
        if self.seen.count(name) == 1:
            raise RuntimeError("the first run fails")


@pytest.fixture
async def engine(tmp_path: Path, database_url: str | None) -> AsyncIterator[tuple[Jobs, Calls]]:
    calls = Calls()
    database = open_for(tmp_path, database_url)
    jobs: Jobs
    if database_url is None:
        from toshokan.core.jobs.local import LocalJobs

        jobs = LocalJobs(database, tmp_path / "jobs.lock")
    else:
        from toshokan.core.jobs.cluster import ProcrastinateJobs

        jobs = ProcrastinateJobs(database_url)
    jobs.add(Task("test.record", calls.record))
    jobs.add(Task("test.flaky", calls.fail_once, retry=Backoff(attempts=3, first=0.2)))
    await jobs.start(2)
    try:
        yield jobs, calls
    finally:
        await jobs.stop()
        database.close()


async def until(condition, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not within the time"
        await asyncio.sleep(0.05)


async def test_a_keyed_job_is_queued_once_and_can_be_cancelled(engine) -> None:
    jobs, calls = engine
    later = time.time() + 3600
    assert await jobs.defer("test.record", {"name": "a"}, key="series", at=later)
    assert not await jobs.defer("test.record", {"name": "b"}, key="series", at=later)
    assert (await jobs.status()).queued.get("test.record") == 1
    assert await jobs.cancel("test.record", "series") == 1
    assert await jobs.defer("test.record", {"name": "c"}, key="series")
    await until(lambda: calls.seen == ["c"])


async def test_a_failing_job_is_retried_with_backoff(engine) -> None:
    jobs, calls = engine
    assert await jobs.defer("test.flaky", {"name": "x"})
    await until(lambda: calls.seen == ["x", "x"])
    status = await jobs.status()
    assert status.failed == {} and status.workers >= 1


def test_procrastinates_schema_is_the_one_migration_0004_applies() -> None:
    """A newer procrastinate with SQL migrations of its own needs a migration of ours first."""
    from importlib import import_module

    from procrastinate.schema import SchemaManager

    migration = import_module("toshokan.core.database.migrations.versions.0004_follows_and_jobs")
    shipped = sorted(p.name for p in Path(SchemaManager.get_migrations_path()).glob("*.sql"))
    assert shipped[-1] == migration.PROCRASTINATE_SCHEMA
