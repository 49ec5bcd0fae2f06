"""The core's background work (checks of follows, deliveries of their news, downloads): one
interface, two engines.

A job is a named task and JSON arguments, deferred to run soon or at a time.
It may carry a *key* (while one job of a task and key waits in the queue, deferring
another is refused: a series already queued for a check is not queued twice), a
*lock* (jobs of one lock never run at once, wherever they run) and a priority
(higher first). A task that fails is retried with exponential backoff, up to its
attempts. Periodic tasks run every so many seconds, once for the whole host.

No request ever waits on a job: a face defers one and answers.

Two engines, chosen by the deployment, behind :class:`Jobs`:

- with ``[cluster] database`` (PostgreSQL), **procrastinate** (:mod:`.cluster`):
  a maintained asyncio job queue on psycopg 3, which the host already speaks. Every
  process of every replica works the one queue; periodic tasks are deferred once per
  tick across all of them; each worker records a heartbeat, and the jobs of a worker
  whose heartbeats stopped (a replica killed) are handed to the others within
  :data:`~toshokan.core.jobs.cluster.STALLED_SECONDS` and a sweep.
- the embedded default (SQLite in ``data_dir``, one process): no maintained asyncio
  queue runs on SQLite without a server (procrastinate's and pgqueuer's in-memory
  connectors are for tests; APScheduler 4's SQL stores are a pre-release; huey runs
  tasks in threads), so **APScheduler 3** (:mod:`.local`) times the jobs in the one
  process, and the queue itself is a table of the host's SQLite, replanned at start:
  a job the process was running when it died runs again.
"""

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

#: A job's arguments: what JSON holds (they are stored as JSON by both engines).
Arguments = Mapping[str, Any]
#: What a task runs: a coroutine function called with the job's arguments as keywords.
Run = Callable[..., Awaitable[None]]


@dataclass(frozen=True)
class Backoff:
    """Retrying a failed job: ``attempts`` runs at most, waiting ``first`` seconds after the
    first failure, twice as long after each next one, ``most`` at the longest."""

    attempts: int = 5
    first: float = 30.0
    most: float = 3600.0

    def delay(self, failures: int) -> float:
        """Seconds to wait after the ``failures``-th failure (counted from 1)."""
        return float(min(self.most, self.first * 2 ** max(0, failures - 1)))

    def gives_up(self, runs: int) -> bool:
        """Whether a job that has run (and failed) ``runs`` times is not run again."""
        return runs >= self.attempts


@dataclass(frozen=True)
class Task:
    """One kind of job: its name (stable: queued jobs name it), what it runs, its retries."""

    name: str
    run: Run
    retry: Backoff | None = None


@dataclass(frozen=True)
class Status:
    """What an operator asks of the engine (``toshokan follows status``)."""

    engine: str
    #: Jobs waiting (due now or later), running, and failed for good, by task name.
    queued: dict[str, int] = field(default_factory=dict)
    running: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    #: Processes working the queue now (the cluster's workers with a recent heartbeat).
    workers: int = 0


class Jobs(Protocol):
    """A job engine: tasks registered once, jobs deferred from anywhere in the process."""

    #: The engine's name, for the status and the docs.
    name: str
    #: Whether one process alone works the queue (the embedded engine, whose worker holds its
    #: lock): work another process claimed was that of one stopped or dead.
    sole: bool

    def add(self, task: Task) -> None:
        """Register ``task`` (before :meth:`open`)."""

    def every(self, task: Task, seconds: int) -> None:
        """Register ``task`` to run every ``seconds`` (a divisor of 60, or whole minutes), once
        for the whole host however many processes work the queue; it is called with no
        arguments, and a run still queued when the next is due is not doubled."""

    async def open(self) -> None:
        """Be ready to defer jobs (a command that defers and leaves)."""

    async def start(self, concurrency: int) -> None:
        """:meth:`open`, and work the queue in this process, ``concurrency`` jobs at once."""

    async def stop(self) -> None:
        """Stop working the queue (running jobs get a moment to end) and close."""

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
        """Queue a job of ``task`` to run at ``at`` (Unix time; now when None). False, and
        nothing queued, when a job of ``task`` with ``key`` is waiting already."""

    async def cancel(self, task: str, key: str) -> int:
        """Drop the waiting jobs of ``task`` with ``key`` (a running one is aborted); how many."""

    async def status(self) -> Status: ...


#: Blocking calls of background jobs still running in worker threads.
_in_threads: set["asyncio.Future[Any]"] = set()


async def in_thread(call: Callable[..., T], *args: Any, **keywords: Any) -> T:
    """``call(*args, **keywords)`` in a worker thread, for a background job. A job cancelled meanwhile (its
    engine stopping) leaves the call to return, and :func:`settled` waits for it: the
    database is never closed under a thread still using it."""
    future = asyncio.ensure_future(asyncio.to_thread(call, *args, **keywords))
    _in_threads.add(future)
    future.add_done_callback(_in_threads.discard)
    return await asyncio.shield(future)


async def settled() -> None:
    """Return once every call :func:`in_thread` made from this event loop has returned."""
    loop = asyncio.get_running_loop()
    while pending := [f for f in _in_threads if f.get_loop() is loop and not f.done()]:
        await asyncio.gather(*pending, return_exceptions=True)


def cron_of(seconds: int) -> str:
    """``seconds`` as a cron line with a seconds field last (croniter's, procrastinate's)."""
    if seconds < 60:
        if 60 % seconds:
            raise ValueError(f"a period under a minute divides 60, not {seconds}")
        return f"* * * * * */{seconds}"
    if seconds % 60 or seconds > 3600:
        raise ValueError(f"a period of a minute or more is whole minutes to an hour, not {seconds}")
    return "0 * * * *" if seconds == 3600 else f"*/{seconds // 60} * * * *"


__all__ = [
    "Arguments",
    "Backoff",
    "Jobs",
    "Run",
    "Status",
    "Task",
    "cron_of",
    "in_thread",
    "settled",
]
