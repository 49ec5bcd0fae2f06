"""The cluster's job engine: procrastinate, on the host's PostgreSQL (``[cluster] database``).

Every process that serves (each replica, each ``--workers`` process) runs one
procrastinate worker in its event loop, beside the requests. The queue, its
locks and the periodic deferrals are procrastinate's, in the tables migration
``0004`` made; what is ours is how the host's :class:`~toshokan.core.jobs.Task`
maps onto procrastinate's tasks, and handing over the jobs of a dead process:

- a worker writes a heartbeat every :data:`HEARTBEAT_SECONDS`;
- every :data:`SWEEP_SECONDS` one process of the host (a periodic task, deferred
  once per tick) puts the jobs of workers silent for :data:`STALLED_SECONDS`
  back in the queue, where any other worker takes them. A replica killed by
  SIGKILL mid-job has its job redone well within a minute.
"""

import asyncio
import contextlib
import datetime
import logging
from typing import Any

from procrastinate import App, PsycopgConnector, RetryDecision
from procrastinate.exceptions import AlreadyEnqueued
from procrastinate.jobs import Job
from procrastinate.retry import BaseRetryStrategy

from toshokan.core.jobs import Arguments, Backoff, Status, Task, cron_of, settled

log = logging.getLogger("toshokan.jobs")

#: Seconds between a worker's heartbeats, and without one after which its jobs are redone.
HEARTBEAT_SECONDS = 5.0
STALLED_SECONDS = 20.0
#: Seconds between two sweeps for the jobs of silent workers.
SWEEP_SECONDS = 10
#: Seconds a stopping worker lets its running jobs finish before aborting them (they run
#: again: a check left undone is still due).
GRACE_SECONDS = 5.0
#: Seconds before a worker that stopped by itself (the database went away) is started again.
RESTART_SECONDS = 5.0
#: Days a job that failed for good stays listed for the operator.
KEEP_FAILED_DAYS = 7


class Retrying(BaseRetryStrategy):
    """A :class:`Backoff` as procrastinate's retry strategy."""

    def __init__(self, backoff: Backoff):
        self.backoff = backoff

    def get_retry_decision(self, *, exception: BaseException, job: Job) -> RetryDecision | None:
        runs = job.attempts + 1  # procrastinate counts the attempts before this one
        if self.backoff.gives_up(runs):
            return None
        when = datetime.datetime.now(datetime.UTC) + datetime.timedelta(
            seconds=self.backoff.delay(runs)
        )
        return RetryDecision(retry_at=when)


class ProcrastinateJobs:
    """:class:`~toshokan.core.jobs.Jobs` on procrastinate."""

    name = "procrastinate"
    sole = False

    def __init__(self, url: str):
        # A small pool: jobs spend most of their time on upstreams, not on the queue.
        self.app = App(connector=PsycopgConnector(conninfo=url, min_size=1, max_size=4))
        self._worker: asyncio.Task[None] | None = None
        self._opened = False
        self._add_sweep()

    def _register(self, task: Task) -> Any:
        async def run(**arguments: Any) -> None:
            arguments.pop("timestamp", None)  # what procrastinate tells a periodic task
            await task.run(**arguments)

        retry: Any = Retrying(task.retry) if task.retry else False
        return self.app.task(name=task.name, retry=retry)(run)

    def add(self, task: Task) -> None:
        self._register(task)

    def every(self, task: Task, seconds: int) -> None:
        registered = self._register(task)
        self.app.periodic(cron=cron_of(seconds), periodic_id=task.name, queueing_lock=task.name)(
            registered
        )

    def _add_sweep(self) -> None:
        async def sweep() -> None:
            manager = self.app.job_manager
            for job in await manager.get_stalled_jobs(seconds_since_heartbeat=STALLED_SECONDS):
                log.info("job %s of a process that stopped answering runs again", job.task_name)
                await manager.retry_job(job)
            await manager.delete_old_jobs(nb_hours=KEEP_FAILED_DAYS * 24, include_failed=True)

        self.every(Task("toshokan.jobs.sweep", sweep), SWEEP_SECONDS)

    async def open(self) -> None:
        if not self._opened:
            await self.app.open_async()
            self._opened = True

    async def start(self, concurrency: int) -> None:
        await self.open()
        self._worker = asyncio.create_task(self._work(concurrency), name="toshokan jobs")

    async def _work(self, concurrency: int) -> None:
        """Run a worker, and another whenever one stops by itself: procrastinate stops its
        worker when PostgreSQL stops answering (a heartbeat fails), and the host must go on
        working the queue once the database is back, without a restart."""
        while True:
            try:
                await self.app.run_worker_async(
                    concurrency=concurrency,
                    name="toshokan",
                    install_signal_handlers=False,
                    update_heartbeat_interval=HEARTBEAT_SECONDS,
                    stalled_worker_timeout=STALLED_SECONDS,
                    shutdown_graceful_timeout=GRACE_SECONDS,
                    delete_jobs="successful",
                )
            except Exception as error:
                log.warning("the job worker stopped (%s); starting another", type(error).__name__)
            await asyncio.sleep(RESTART_SECONDS)

    async def stop(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await worker
        await settled()
        if self._opened:
            self._opened = False
            try:
                await self.app.close_async()
            except Exception as error:  # the database went away: nothing is left to close
                log.warning("closing the job queue's connections failed: %s", type(error).__name__)

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
        when = None if at is None else datetime.datetime.fromtimestamp(at, datetime.UTC)
        deferrer = self.app.tasks[task].configure(
            queueing_lock=key, lock=lock, priority=priority, schedule_at=when
        )
        try:
            await deferrer.defer_async(**arguments)
        except AlreadyEnqueued:
            return False
        return True

    async def cancel(self, task: str, key: str) -> int:
        manager = self.app.job_manager
        cancelled = 0
        for status in ("todo", "doing"):
            for job in await manager.list_jobs_async(task=task, queueing_lock=key, status=status):
                if job.id is not None and await manager.cancel_job_by_id_async(job.id, abort=True):
                    cancelled += 1
        return cancelled

    async def status(self) -> Status:
        queued: dict[str, int] = {}
        running: dict[str, int] = {}
        failed: dict[str, int] = {}
        for row in await self.app.job_manager.list_tasks_async():
            name = row["name"]
            for counts, status in ((queued, "todo"), (running, "doing"), (failed, "failed")):
                if row.get(status):
                    counts[name] = int(row[status])
        workers = await self.app.connector.execute_query_one_async(
            "SELECT count(*) AS n FROM procrastinate_workers "
            "WHERE last_heartbeat > NOW() - make_interval(secs => %(stalled)s)",
            stalled=STALLED_SECONDS,
        )
        return Status(self.name, queued, running, failed, int(workers["n"]))
