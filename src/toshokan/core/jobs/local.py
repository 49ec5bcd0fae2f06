"""The embedded host's job engine: APScheduler 3 times the jobs, the host's SQLite keeps them.

One process works the queue (a host without ``[cluster] database`` is one
process; of several ``--workers`` sharing one ``data_dir``, the one holding
``data_dir/jobs.lock`` works it, and another takes over when it goes). Jobs are
rows of ``local_jobs`` in the host's SQLite, written before :meth:`LocalJobs.defer`
returns; APScheduler runs each at its time (a date trigger) and the periodic
tasks on interval triggers. Every few seconds the worker also looks for queued
rows it has not planned (deferred by another process: a command, a worker that
does not hold the lock). At start, a row left ``doing`` by a process that died
is queued again, so nothing acknowledged is lost.

Locks are the process's own (it alone runs jobs); priorities order the jobs
waiting for one of the ``concurrency`` slots.
"""

import asyncio
import contextlib
import datetime
import fcntl
import heapq
import itertools
import json
import logging
import time
import uuid
from pathlib import Path
from typing import IO, Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from toshokan.core.database import Database
from toshokan.core.jobs import Arguments, Status, Task, in_thread, settled

log = logging.getLogger("toshokan.jobs")

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS local_jobs(
        id TEXT PRIMARY KEY,
        task TEXT NOT NULL,
        arguments TEXT NOT NULL,
        key TEXT,
        lock TEXT,
        priority INTEGER NOT NULL,
        status TEXT NOT NULL,
        runs INTEGER NOT NULL,
        scheduled DOUBLE PRECISION NOT NULL,
        error TEXT,
        updated DOUBLE PRECISION NOT NULL
    )""",
    # One waiting job per task and key: a second is refused, as procrastinate's queueing lock.
    "CREATE UNIQUE INDEX IF NOT EXISTS local_jobs_key ON local_jobs(task, key) "
    "WHERE status = 'todo' AND key IS NOT NULL",
)
#: Seconds between two looks for queued jobs this process has not planned.
PICK_UP_SECONDS = 2.0
#: Seconds between two tries at the queue's lock by a process that does not hold it.
TAKE_OVER_SECONDS = 5.0
#: Characters of a failure's message kept with the job.
MAX_ERROR = 300
#: Days a job that failed for good stays listed for the operator.
KEEP_FAILED_DAYS = 7


class Slots:
    """``count`` places for running jobs, given to the waiting job of highest priority first."""

    def __init__(self, count: int):
        self.free = count
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    async def acquire(self, priority: int) -> None:
        if self.free and not self._waiting:
            self.free -= 1
            return
        place: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (-priority, next(self._order), place))
        try:
            await place
        except asyncio.CancelledError:
            if place.done() and not place.cancelled():
                self.release()  # given a place just as it was cancelled: hand it on
            raise

    def release(self) -> None:
        while self._waiting:
            _, _, place = heapq.heappop(self._waiting)
            if not place.done():
                place.set_result(None)
                return
        self.free += 1


class LocalJobs:
    """:class:`~toshokan.core.jobs.Jobs` on APScheduler and the host's SQLite."""

    name = "apscheduler"
    sole = True

    def __init__(self, database: Database, lock_path: Path):
        self.database = database
        self.lock_path = lock_path
        self._tasks: dict[str, Task] = {}
        self._periodic: list[tuple[Task, int]] = []
        self._scheduler: AsyncIOScheduler | None = None
        self._planned: set[str] = set()
        self._locks: dict[str, asyncio.Lock] = {}
        self._running: dict[str, asyncio.Task[None]] = {}
        #: Every coroutine APScheduler runs for this engine (picking up, periodic, jobs).
        self._coroutines: set[asyncio.Task[Any]] = set()
        self._slots = Slots(1)
        self._lock_file: IO[str] | None = None
        self._waiting: asyncio.Task[None] | None = None
        with database.transaction() as cursor:
            for statement in SCHEMA:
                cursor.execute(statement)

    def add(self, task: Task) -> None:
        self._tasks[task.name] = task

    def every(self, task: Task, seconds: int) -> None:
        self._periodic.append((task, seconds))

    async def open(self) -> None:
        """Nothing to open: a job deferred here is a row, which the working process plans."""

    # -- working the queue ---------------------------------------------------------------

    async def start(self, concurrency: int) -> None:
        self._slots = Slots(concurrency)
        if not self._take_queue():
            self._waiting = asyncio.create_task(self._take_over())
            return
        await self._work()

    def _take_queue(self) -> bool:
        """Whether this process now holds the queue's lock (kept until it stops or dies)."""
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.lock_path.open("a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return False
        self._lock_file = handle
        return True

    async def _take_over(self) -> None:
        while not self._take_queue():  # noqa: ASYNC110 - a file lock has no event to wait on
            await asyncio.sleep(TAKE_OVER_SECONDS)
        await self._work()

    def _requeue(self) -> None:
        """Jobs a process that died was running: they run again."""
        with self.database.transaction() as cursor:
            cursor.execute("UPDATE local_jobs SET status = 'todo' WHERE status = 'doing'")

    async def _work(self) -> None:
        await in_thread(self._requeue)
        scheduler = AsyncIOScheduler(
            timezone=datetime.UTC, job_defaults={"misfire_grace_time": None, "coalesce": True}
        )
        for task, seconds in self._periodic:
            scheduler.add_job(
                self._periodically, "interval", seconds=seconds, args=[task], max_instances=1
            )
        scheduler.add_job(self._pick_up, "interval", seconds=PICK_UP_SECONDS, max_instances=1)
        scheduler.start()
        self._scheduler = scheduler
        scheduler.add_job(self._pick_up)  # at once: what the last run left queued

    async def stop(self) -> None:
        if self._waiting is not None:
            self._waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._waiting
        scheduler, self._scheduler = self._scheduler, None
        if scheduler is not None:
            scheduler.shutdown(wait=False)
        # Jobs left 'doing' are queued again at the next start.
        running = list(self._coroutines)
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        await settled()
        if self._lock_file is not None:
            self._lock_file.close()  # lets go of the lock
            self._lock_file = None

    def _tracked(self) -> None:
        """Count the running coroutine among this engine's, so stopping can end it."""
        task = asyncio.current_task()
        if task is not None:
            self._coroutines.add(task)
            task.add_done_callback(self._coroutines.discard)

    async def _periodically(self, task: Task) -> None:
        self._tracked()
        try:
            await task.run()
        except asyncio.CancelledError:
            return  # the engine stops
        except Exception:
            log.exception("periodic job %s failed", task.name)

    async def _pick_up(self) -> None:
        self._tracked()
        try:
            rows = await in_thread(self._queued)
        except asyncio.CancelledError:
            return  # the engine stops
        for job_id, scheduled in rows:
            if job_id not in self._planned:
                self._plan(job_id, scheduled)

    def _queued(self) -> list[tuple[str, float]]:
        with self.database.transaction() as cursor:
            cursor.execute("SELECT id, scheduled FROM local_jobs WHERE status = 'todo'")
            rows = cursor.fetchall()
            cursor.execute(
                "DELETE FROM local_jobs WHERE status = 'failed' AND updated < ?",
                (time.time() - KEEP_FAILED_DAYS * 86400,),
            )
        return [(row[0], float(row[1])) for row in rows]

    def _plan(self, job_id: str, at: float) -> None:
        scheduler = self._scheduler
        if scheduler is None:
            return
        self._planned.add(job_id)
        when = datetime.datetime.fromtimestamp(max(at, time.time()), datetime.UTC)
        scheduler.add_job(self._run, "date", run_date=when, args=[job_id])

    async def _run(self, job_id: str) -> None:
        self._tracked()
        job = asyncio.current_task()
        assert job is not None
        self._running[job_id] = job
        try:
            await self._run_planned(job_id)
        except asyncio.CancelledError:
            return  # the engine stops (or the job was cancelled): it stays queued or is gone
        finally:
            self._running.pop(job_id, None)
            self._planned.discard(job_id)

    async def _run_planned(self, job_id: str) -> None:
        row = await in_thread(self._row, job_id)
        if row is None:
            return  # cancelled meanwhile
        name, arguments, lock, priority, runs = row
        task = self._tasks.get(name)
        if task is None:
            await in_thread(self._failed, job_id, f"no task is named {name!r}")
            return
        await self._slots.acquire(priority)
        try:
            async with self._lock(lock):
                if not await in_thread(self._claim, job_id):
                    return
                try:
                    await task.run(**json.loads(arguments))
                except Exception as error:
                    await self._after_failure(task, job_id, runs + 1, error)
                else:
                    await in_thread(self._done, job_id)
        finally:
            self._slots.release()

    def _lock(self, name: str | None) -> contextlib.AbstractAsyncContextManager[Any]:
        if name is None:
            return contextlib.nullcontext()
        return self._locks.setdefault(name, asyncio.Lock())

    async def _after_failure(self, task: Task, job_id: str, runs: int, error: Exception) -> None:
        reason = f"{type(error).__name__}: {error}"[:MAX_ERROR]
        if task.retry is None or task.retry.gives_up(runs):
            log.warning("job %s failed for good after %d run(s): %s", task.name, runs, reason)
            await in_thread(self._failed, job_id, reason, runs)
            return
        at = time.time() + task.retry.delay(runs)
        await in_thread(self._again, job_id, reason, runs, at)
        self._planned.discard(job_id)
        self._plan(job_id, at)

    # -- the queue's rows ------------------------------------------------------------------

    def _row(self, job_id: str) -> tuple[str, str, str | None, int, int] | None:
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT task, arguments, lock, priority, runs FROM local_jobs "
                "WHERE id = ? AND status = 'todo'",
                (job_id,),
            )
            row = cursor.fetchone()
        return None if row is None else (row[0], row[1], row[2], int(row[3]), int(row[4]))

    def _claim(self, job_id: str) -> bool:
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE local_jobs SET status = 'doing', updated = ? "
                "WHERE id = ? AND status = 'todo'",
                (time.time(), job_id),
            )
            return cursor.rowcount > 0

    def _done(self, job_id: str) -> None:
        with self.database.transaction() as cursor:
            cursor.execute("DELETE FROM local_jobs WHERE id = ?", (job_id,))

    def _again(self, job_id: str, reason: str, runs: int, at: float) -> None:
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE local_jobs SET status = 'todo', runs = ?, error = ?, scheduled = ?, "
                "updated = ? WHERE id = ?",
                (runs, reason, at, time.time(), job_id),
            )

    def _failed(self, job_id: str, reason: str, runs: int = 1) -> None:
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE local_jobs SET status = 'failed', runs = ?, error = ?, updated = ? "
                "WHERE id = ?",
                (runs, reason, time.time(), job_id),
            )

    # -- from anywhere ---------------------------------------------------------------------

    async def defer(
        self,
        task: str,
        arguments: Arguments,
        *,
        key: str | None = None,
        lock: str | None = None,
        priority: int = 0,
        at: float | None = None,
    ) -> bool:
        job_id = uuid.uuid4().hex
        when = time.time() if at is None else at
        row = (job_id, task, json.dumps(dict(arguments)), key, lock, priority, when, time.time())

        def insert() -> bool:
            with self.database.transaction() as cursor:
                cursor.execute(
                    "INSERT INTO local_jobs(id, task, arguments, key, lock, priority, status, "
                    "runs, scheduled, updated) VALUES(?, ?, ?, ?, ?, ?, 'todo', 0, ?, ?) "
                    "ON CONFLICT DO NOTHING",
                    row,
                )
                return cursor.rowcount > 0

        if not await in_thread(insert):
            return False
        self._plan(job_id, when)
        return True

    async def cancel(self, task: str, key: str) -> int:
        def drop() -> list[str]:
            with self.database.transaction() as cursor:
                cursor.execute(
                    "SELECT id FROM local_jobs WHERE task = ? AND key = ? "
                    "AND status IN ('todo', 'doing')",
                    (task, key),
                )
                ids = [row[0] for row in cursor.fetchall()]
                cursor.execute(
                    "DELETE FROM local_jobs WHERE task = ? AND key = ? "
                    "AND status IN ('todo', 'doing')",
                    (task, key),
                )
            return ids

        ids = await in_thread(drop)
        for job_id in ids:
            running = self._running.get(job_id)
            if running is not None:
                running.cancel()
        return len(ids)

    async def status(self) -> Status:
        def counts() -> list[tuple[str, str, int]]:
            with self.database.transaction() as cursor:
                cursor.execute(
                    "SELECT task, status, count(*) FROM local_jobs GROUP BY task, status"
                )
                return [(row[0], row[1], int(row[2])) for row in cursor.fetchall()]

        found: dict[str, dict[str, int]] = {"todo": {}, "doing": {}, "failed": {}}
        for name, status, count in await in_thread(counts):
            found.setdefault(status, {})[name] = count
        return Status(self.name, found["todo"], found["doing"], found["failed"], self._workers())

    def _workers(self) -> int:
        """1 when some process works the queue (holds its lock), else 0."""
        if self._lock_file is not None:
            return 1
        if not self.lock_path.exists():
            return 0
        with self.lock_path.open("a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return 1
            fcntl.flock(handle, fcntl.LOCK_UN)
        return 0
