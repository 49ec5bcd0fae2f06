"""The download queue's jobs, on the core's job engine (the same as the checks').

- ``downloads.tick``, every :data:`TICK_SECONDS` once for the whole host (and
  ``downloads.work`` whenever something changed): a paused folder is tried again
  (the queue resumes by itself once it can be written), then the first rows of the
  queue that the host's limits leave room for get a ``downloads.keep`` job each.
  Once a minute it also queues what every kept series asks for, so chapters a
  check found are queued even if the process that found them died before it did.
- ``downloads.series``: queue what one kept series asks for (a check found new
  chapters; a reader began keeping it).
- ``downloads.keep``: claim one row (:meth:`~.store.DownloadStore.claim`), keep its
  chapter through the :class:`~toshokan.core.keeping.Keeper` while renewing the
  claim, and record what came of it: kept; the folder full or read-only (the row
  goes back, the queue pauses with the reason); the upstream failing (tried again
  after a minute, then doubling, then failed with the reason); the chapter itself
  bad (failed at once). A process killed mid-chapter leaves its claim to lapse;
  the tick then hands the row to another job, anywhere. On the embedded engine
  one process alone works the queue, so a claim that is not its own is that of
  a process stopped or killed: it is released as the process begins, and a
  restarted host finishes the interrupted chapter at once.

Downloads are background work (the keeper marks them): every reader's request goes
first on every upstream budget they share.
"""

import asyncio
import contextlib
import logging
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from toshokan.core.downloads.choose import chosen
from toshokan.core.downloads.store import (
    LEASE_SECONDS,
    Candidate,
    Download,
    DownloadStore,
    QueueState,
)
from toshokan.core.jobs import Backoff, Jobs, Task, in_thread
from toshokan.core.keeping import KeepError
from toshokan.core.keeping.shelf import DRAFTS, disk_error
from toshokan.errors import HostError, NotFound

if TYPE_CHECKING:
    from toshokan.core.downloads.parts import QueueParts

log = logging.getLogger("toshokan.downloads")

TICK, WORK, SERIES, KEEP = "downloads.tick", "downloads.work", "downloads.series", "downloads.keep"
#: Seconds between two looks at the queue (and at a paused folder).
TICK_SECONDS = 10
#: Seconds between two looks at every kept series for chapters to queue.
RECONCILE_SECONDS = 60.0
#: Below checks and announcements: a reader's "check now" is never behind a download.
PRIORITY = -5
#: Reasons the queue pauses for: the keep folder's, fixed by the operator.
FOLDER_REASONS = ("no-space", "not-writable")
#: Bytes written to see whether a paused folder takes writes again.
PROBE_BYTES = 64 * 1024
#: Seconds between two progress records of a chapter being kept.
PROGRESS_SECONDS = 1.0


class Withdrawn(Exception):
    """The row is not this job's any more (cancelled, held, or its claim lapsed)."""


def probe(folder: Path) -> str | None:
    """None when the keep folder takes a small file again; else what stops it. Blocking."""
    drafts = folder / DRAFTS
    path = drafts / f"probe-{uuid.uuid4().hex}"
    try:
        drafts.mkdir(exist_ok=True)
        with path.open("wb") as out:
            out.write(b"\0" * PROBE_BYTES)
            out.flush()
            os.fsync(out.fileno())
    except OSError as error:
        return disk_error(error, "trying the folder again").message
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
    return None


class Runner:
    def __init__(self, core: "QueueParts", jobs: Jobs, store: DownloadStore):
        self.core = core
        self.settings = core.settings.keep
        self.jobs = jobs
        self.store = store
        self.retry = Backoff(
            attempts=self.settings.attempts, first=float(self.settings.retry_after), most=3600.0
        )
        self._reconciled = 0.0
        #: This process's mark on the claims it takes (their tokens begin with it).
        self.holder = uuid.uuid4().hex
        self._taken_over = False
        #: Called with (source, bytes) for every chapter kept, (source, reason) for every
        #: failure, and the queue's figures (rows by state, failures by reason, paused) each tick.
        self.on_kept: list[Callable[[str, int], None]] = []
        self.on_failed: list[Callable[[str, str], None]] = []
        self.on_figures: list[Callable[[dict[str, int], dict[str, int], bool], None]] = []
        self.on_state: list[Callable[[QueueState], None]] = []
        jobs.every(Task(TICK, self.tick), TICK_SECONDS)
        jobs.add(Task(WORK, self.work))
        jobs.add(Task(SERIES, self.series_job))
        jobs.add(Task(KEEP, self.keep))

    # -- looking at the queue -----------------------------------------------------------------

    async def kick(self) -> None:
        """Look at the queue soon (something changed), once however often asked."""
        await self.jobs.defer(WORK, {}, key=WORK, priority=PRIORITY)

    async def tick(self) -> None:
        if time.monotonic() - self._reconciled >= RECONCILE_SECONDS:
            self._reconciled = time.monotonic()
            await self.reconcile()
        await self.work()
        if self.on_figures:
            states, reasons = await in_thread(self.store.counts)
            paused = (await in_thread(self.store.state)).paused is not None
            for listener in self.on_figures:
                listener(states, reasons, paused)

    async def _take_over(self) -> None:
        """On the embedded engine, once, as this process begins working the queue: release
        the claims of the process that worked it before (it stopped or died mid-chapter)."""
        if self._taken_over or not self.jobs.sole:
            return
        self._taken_over = True
        released = await in_thread(self.store.release_others, self.holder)
        if released:
            log.info("downloads: %d interrupted chapter(s) resume", released)

    async def work(self) -> None:
        """Resume a folder fixed since, then give the first rows there is room for a job."""
        if not self.settings.enabled:
            return
        await self._take_over()
        state = await in_thread(self.store.state)
        if state.paused in FOLDER_REASONS:
            state = await self._try_folder(state)
        for listener in self.on_state:
            listener(state)
        if state.paused is not None:
            return
        count, by_source, series = await in_thread(self.store.running)
        free = self.settings.concurrency - count
        if free <= 0:
            return
        for row in await in_thread(self.store.due, free * 8 + 8):
            if free <= 0:
                break
            if by_source.get(row.source, 0) >= self.settings.source_concurrency:
                continue
            if (row.source, row.manga) in series:
                continue
            if await self.jobs.defer(KEEP, {"download": row.id}, key=row.id, priority=PRIORITY):
                free -= 1
                by_source[row.source] = by_source.get(row.source, 0) + 1
                series.add((row.source, row.manga))

    async def _try_folder(self, state: QueueState) -> QueueState:
        shelf = self.core.keeper.shelf
        if shelf is None:
            return state
        problem = await in_thread(probe, shelf.folder)
        if problem is not None:
            return state
        if await in_thread(self.store.resume, FOLDER_REASONS):
            log.info("downloads: the keep folder takes files again; the queue resumes")
        return await in_thread(self.store.state)

    # -- choosing what to queue ----------------------------------------------------------------

    async def reconcile(self) -> int:
        """Queue what every kept series asks for; how many chapters were queued."""
        keeps = await in_thread(self.store.keeps)
        queued = 0
        for source, manga in sorted({(k.source, k.manga) for k in keeps}):
            queued += await self.series(source, manga)
        return queued

    async def series_job(self, source: str, manga: str) -> None:
        await self.series(source, manga)

    async def series(self, source: str, manga: str) -> int:
        """Queue what the readers keeping the series ask for of what its checks recorded."""
        if not self.settings.enabled or not self._may_keep(source):
            return 0
        keeps = [
            k
            for k in await in_thread(self.store.keeps, source, manga)
            if self._may_keep_for(k.reader)
        ]
        if not keeps:
            return 0
        title, recorded = await in_thread(self.store.candidates, source, manga)
        skipped = await in_thread(self.store.cancelled, source, manga)
        picked: dict[str, Candidate] = {}
        for keep in keeps:
            _, numbers = await in_thread(self.store.taken, source, manga)
            finished = (
                await in_thread(self.store.finished_by, keep.reader, source, manga)
                if keep.only_unread
                else set()
            )
            for candidate in chosen(
                keep,
                recorded,
                finished=finished,
                taken_numbers=numbers | {c.number for c in picked.values()},
                skipped=skipped,
            ):
                picked[candidate.chapter] = candidate
        queued = await in_thread(self.store.enqueue, source, manga, title, list(picked.values()))
        if queued:
            log.info("downloads: %d chapter(s) of %s/%s queued", queued, source, manga)
            await self.kick()
        return queued

    def _may_keep(self, source: str) -> bool:
        allowed = self.settings.sources
        return allowed is None or source in allowed

    def _may_keep_for(self, reader: str) -> bool:
        allowed = self.settings.readers
        return allowed is None or reader in allowed

    # -- keeping one chapter -------------------------------------------------------------------

    async def keep(self, download: str) -> None:
        await self._take_over()
        token = f"{self.holder}.{uuid.uuid4().hex}"
        row = await in_thread(
            self.store.claim,
            download,
            token,
            overall=self.settings.concurrency,
            per_source=self.settings.source_concurrency,
        )
        if row is None:
            return  # taken, steered, paused, or no room now: a later tick looks again
        try:
            await self._keep(row, token)
        except asyncio.CancelledError:
            # The engine stops: back in the queue at once, for whichever process is next.
            await in_thread(self.store.requeue, row.id, token)
            raise
        await self.kick()

    async def _keep(self, row: Download, token: str) -> None:
        progress: list[int | None] = [None, 0, 0]  # pages, pages done, bytes
        last = [time.monotonic()]

        async def told(done: int, pages: int, size: int) -> None:
            progress[:] = [pages, done, size]
            if time.monotonic() - last[0] >= PROGRESS_SECONDS or done == pages:
                last[0] = time.monotonic()
                if not await in_thread(self.store.renew, row.id, token, pages, done, size):
                    raise Withdrawn()

        async def publishing(path: str) -> None:
            # From here the chapter is this row's to finish: a cancel is answered too late.
            if not await in_thread(self.store.publishing, row.id, token, path):
                raise Withdrawn()

        work = asyncio.create_task(
            self.core.keeper.keep(
                row.source, row.manga, row.chapter, progress=told, publishing=publishing
            )
        )
        try:
            while not work.done():
                await asyncio.wait({work}, timeout=LEASE_SECONDS / 3)
                pages, done, size = progress
                if not work.done() and not await in_thread(
                    self.store.renew, row.id, token, pages, done or 0, size or 0
                ):
                    work.cancel()
        finally:
            if not work.done():
                work.cancel()
                with contextlib.suppress(BaseException):
                    await work
        try:
            kept = work.result()
        except (Withdrawn, asyncio.CancelledError):
            log.info("downloads: %s/%s/%s was withdrawn", row.source, row.manga, row.chapter)
            return
        except KeepError as error:
            await self._unkept(row, token, error.reason, error.message)
            return
        except NotFound as error:  # removed upstream, or not listed yet: tried again first
            await self._upstream_failed(row, token, "gone", error.message)
            return
        except HostError as error:
            await self._upstream_failed(
                row, token, error.code.lower().replace("_", "-"), error.message
            )
            return
        except Exception as error:  # an adapter's bug fails this try, never the queue
            log.exception("keeping %s/%s/%s failed", row.source, row.manga, row.chapter)
            await self._upstream_failed(row, token, "failed", type(error).__name__)
            return
        tie = kept.tie
        await in_thread(self.store.done, row.id, token, tie.path, tie.pages, tie.bytes)
        if kept.written:
            for listener in self.on_kept:
                listener(row.source, tie.bytes)

    async def _unkept(self, row: Download, token: str, reason: str, message: str) -> None:
        if reason in FOLDER_REASONS:
            await in_thread(self.store.requeue, row.id, token)
            if await in_thread(self.store.pause, reason, message):
                log.warning("downloads: paused: %s", message)
            for listener in self.on_state:
                listener(await in_thread(self.store.state))
            return
        await self._failed(row, token, row.attempts + 1, reason, message)

    async def _upstream_failed(self, row: Download, token: str, reason: str, message: str) -> None:
        attempts = row.attempts + 1
        if self.retry.gives_up(attempts):
            await self._failed(row, token, attempts, reason, message)
            return
        at = time.time() + self.retry.delay(attempts)
        await in_thread(self.store.retry_later, row.id, token, attempts, reason, message, at)

    async def _failed(
        self, row: Download, token: str, attempts: int, reason: str, message: str
    ) -> None:
        await in_thread(self.store.failed, row.id, token, attempts, reason, message[:300])
        log.warning(
            "downloads: %s/%s/%s failed (%s): %s",
            row.source,
            row.manga,
            row.chapter,
            reason,
            message,
        )
        for listener in self.on_failed:
            listener(row.source, reason)
