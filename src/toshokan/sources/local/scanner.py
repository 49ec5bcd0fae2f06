"""Keeping the index in step with the library folder: walk, read what changed, apply.

A scan lists every candidate chapter with a cheap signature
(:mod:`discovery`), opens only those whose signature changed since the last
scan (:mod:`reading`), and writes the result to the index
(:mod:`index.update`), so a 100,000-chapter library is not re-read on every
start. Files that cannot be used are recorded with a reason and shown in the
scan summary. Nothing here raises for bad input; only an unreadable library
root is an error (:class:`~discovery.LibraryUnavailable`).
"""

import multiprocessing
import os
import sqlite3
import threading
from collections import deque
from collections.abc import Generator
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import cast

from toshokan.sdk import Claims as HostClaims
from toshokan.sources.local import reading
from toshokan.sources.local.comicinfo import MAX_COMICINFO_BYTES
from toshokan.sources.local.discovery import FoundChapter, FoundSeries, walk
from toshokan.sources.local.index import Index
from toshokan.sources.local.index.slug_rows import SharedClaims, align_claims
from toshokan.sources.local.index.update import IndexUpdate, Progress
from toshokan.sources.local.reading import ChapterReading
from toshokan.sources.local.scan_report import ScanReport
from toshokan.sources.local.seriesjson import SeriesJson

#: A scan with at least this many chapters to read spreads them over worker processes;
#: for fewer, starting the processes (half a second each) costs more than it saves.
PARALLEL_FROM = 2000
#: Chapters handed to a worker process at once, and batches kept in flight per worker.
BATCH_SIZE = 50
AHEAD = 4
#: Chapters read in the scan's own thread while the worker processes start: about one
#: commit's worth, so a new library shows its first series within a moment.
READ_HERE_FIRST = 500
#: How long a reading process is given to end once its pipe is closed.
STOP_SECONDS = 5.0


def default_workers() -> int:
    """One reading process per CPU, at most eight."""
    return max(1, min(8, os.cpu_count() or 1))


class Scanner:
    """Brings the index up to date with the folder; one scan at a time."""

    def __init__(
        self,
        root: Path,
        index: Index,
        *,
        default_language: str = "en",
        comicinfo_limit: int = MAX_COMICINFO_BYTES,
        workers: int | None = None,
        shared_claims: HostClaims | None = None,
        source: str = "",
    ):
        self.root = root.resolve()
        #: The host's claims every replica shares (under ``source``), or None for the index's.
        self.shared_claims = shared_claims
        self.source = source
        self.index = index
        self.default_language = default_language
        self.comicinfo_limit = comicinfo_limit
        #: Processes reading chapters during a large scan; 0 or 1 reads in the scan's thread.
        self.workers = default_workers() if workers is None else workers
        #: Chapters opened since this scanner was made (tests assert on it).
        self._lock = threading.Lock()
        #: Set to stop a running scan between two chapters (the host is shutting down).
        self.stop = threading.Event()
        #: The index's own files, never taken for library content if kept inside the root.
        self.own_files = index.files()

    def scan(self, only: set[str] | None = None, progress: Progress | None = None) -> ScanReport:
        """Bring the index up to date; ``only`` limits the scan to these top-level names."""
        with self._lock:
            found, walk_problems = self.walk(only)
            with self.index.writer() as db:
                shared = (
                    None
                    if self.shared_claims is None
                    else SharedClaims(self.shared_claims, self.source)
                )
                align_claims(db, shared)
                update = IndexUpdate(
                    db,
                    found,
                    walk_problems,
                    only,
                    read_chapters=self.read_chapters,
                    read_series_json=self.read_series_json,
                    progress=progress,
                    cancelled=self.stop.is_set,
                    claims=shared,
                )
                report = update.run()
                self.name_files(db)
                return report

    def name_files(self, db: sqlite3.Connection) -> None:
        """Give KOReader's id to files indexed before the index kept it (version 6), once.

        A chapter read by this scan got its id then; only the files an older index
        holds unchanged are left, each named with twelve small reads, not reopened.
        """
        unnamed = db.execute(
            "SELECT id, relpath, kind FROM chapters WHERE partial_md5 IS NULL AND kind != 'dir'"
        ).fetchall()
        if not unnamed:
            return
        named = [
            (reading.file_id(reading.real_path(self.root, relpath), kind), chapter_id)
            for chapter_id, relpath, kind in unnamed
        ]
        db.execute("BEGIN")
        db.executemany("UPDATE chapters SET partial_md5 = ? WHERE id = ?", named)
        db.execute("COMMIT")

    def walk(self, only: set[str] | None = None) -> tuple[dict[str, FoundSeries], dict[str, str]]:
        """Every series and chapter candidate, and the files skipped while walking."""
        return walk(self.root, self.own_files, only)

    def read_chapters(self, chapters: list[FoundChapter]) -> Generator[ChapterReading, None, None]:
        """Read these chapters, yielding each one's reading in the same order.

        Opening chapters is nearly all of a first scan's time and each is
        independent, so a large scan reads them in worker processes (the GIL
        leaves threads no faster) while this thread writes the index. Closing
        the iterator early (a cancelled scan) cancels what has not started.
        """
        if len(chapters) < PARALLEL_FROM or self.workers < 2:
            for chapter in chapters:
                yield self.read_chapter(chapter)
            return
        first, others = chapters[:READ_HERE_FIRST], chapters[READ_HERE_FIRST:]
        batches = [others[n : n + BATCH_SIZE] for n in range(0, len(others), BATCH_SIZE)]
        workers = [self._start_worker() for _ in range(self.workers)]
        try:
            # A worker that answers is sent the next batch (one given less of the CPU gets
            # fewer); answers wait here until the batches before them are applied, so the
            # chapters keep their order.
            answers: dict[int, list[ChapterReading] | None] = {}
            sent = 0
            for _ in range(AHEAD):
                for worker in workers:
                    if sent < len(batches):
                        worker.send(sent, batches[sent])
                        sent += 1
            # Read here while the workers start (spawning takes a moment): the index has
            # series to show from the first commit on.
            for chapter in first:
                yield self.read_chapter(chapter)
            for number, batch in enumerate(batches):
                while number not in answers:
                    busy = {w.connection: w for w in workers if w.queued}
                    if not busy:  # every worker died: the rest is read here
                        break
                    for ready in wait(list(busy)):
                        worker = busy[cast(Connection, ready)]
                        answers.update(worker.receive())
                        if worker.alive and sent < len(batches):
                            worker.send(sent, batches[sent])
                            sent += 1
                readings = answers.pop(number, None)
                if readings is None:  # the worker failed or died: read the batch here
                    readings = [self.read_chapter(chapter) for chapter in batch]
                yield from readings
        finally:
            for worker in workers:
                worker.stop()

    def _start_worker(self) -> "_Worker":
        # Spawned, not forked: the host has threads (and their locks) a fork would copy.
        ours, theirs = multiprocessing.Pipe()
        process = multiprocessing.get_context("spawn").Process(
            target=reading.serve_batches,
            args=(theirs, self.root, self.default_language, self.comicinfo_limit),
            daemon=True,
        )
        process.start()
        theirs.close()
        return _Worker(process, ours)

    def read_chapter(self, chapter: FoundChapter) -> ChapterReading:
        """Open one chapter: its record for the index, or why it was skipped; and warnings."""
        return reading.read_chapter(
            chapter,
            self.root,
            default_language=self.default_language,
            comicinfo_limit=self.comicinfo_limit,
        )

    def read_series_json(self, relpath: str) -> SeriesJson:
        """Parse one series.json; raises SeriesJsonError or OSError when unusable."""
        return reading.read_series_json(self.root, relpath)


class _Worker:
    """A reading process and its end of the pipe; batches go in, readings come back.

    The scan's own thread sends and receives (no executor thread between them, which
    needed the GIL the writing thread holds). The process answers its batches in turn;
    one that failed or died answers None for every batch it still had, which the scan
    then reads in its own thread.
    """

    def __init__(self, process: BaseProcess, connection: Connection):
        self.process = process
        self.connection = connection
        #: The numbers of the batches sent and not yet answered, oldest first.
        self.queued: deque[int] = deque()
        self.alive = True

    def send(self, number: int, batch: list[FoundChapter]) -> None:
        self.queued.append(number)
        try:
            self.connection.send(batch)
        except OSError:  # it died: receiving says so
            self.alive = False

    def receive(self) -> dict[int, list[ChapterReading] | None]:
        """The next answer, by its batch's number (every batch left, when it died)."""
        try:
            readings: list[ChapterReading] | None = self.connection.recv()
        except (EOFError, OSError):
            readings = None
        if readings is not None:
            return {self.queued.popleft(): readings}
        self.alive = False
        lost = dict.fromkeys(self.queued)
        self.queued.clear()
        return lost

    def stop(self) -> None:
        """End the process: closing the pipe ends its loop, even mid-batch (its answer
        can no longer be sent)."""
        self.connection.close()
        self.process.join(timeout=STOP_SECONDS)
        if self.process.exitcode is None:
            self.process.kill()
            self.process.join()
