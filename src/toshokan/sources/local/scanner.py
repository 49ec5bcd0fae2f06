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
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Generator
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import cast

from toshokan.sdk import Claims as HostClaims
from toshokan.sources.local import reading
from toshokan.sources.local.comicinfo import MAX_COMICINFO_BYTES
from toshokan.sources.local.discovery import FoundChapter, FoundSeries, walk
from toshokan.sources.local.index import Index
from toshokan.sources.local.index.slug_rows import SharedClaims, align_claims
from toshokan.sources.local.index.update import IndexUpdate, Progress
from toshokan.sources.local.reading import ChapterReading, PlainReading
from toshokan.sources.local.scan_report import ScanReport
from toshokan.sources.local.seriesjson import SeriesJson

#: A scan with at least this many chapters to read spreads them over worker processes;
#: for fewer, starting the processes (half a second each) costs more than it saves.
PARALLEL_FROM = 2000
#: Chapters handed to a worker process at once, and batches kept in flight per worker:
#: enough for the workers to go on reading while the scan commits (rebuilding the series
#: read since the last commit takes tens of milliseconds), and few enough that sending
#: a batch never waits (twelve of 50 chapters are well under a pipe's buffer) and that
#: the readings waiting here stay a few MB.
BATCH_SIZE = 50
AHEAD = 12
#: Chapters read in the scan's own thread while the worker processes start: about one
#: commit's worth, so a new library shows its first series within a moment.
READ_HERE_FIRST = 500
#: Chapters of a first scan sent to the reading processes while the walk goes on, at
#: most: their readings wait here until the index takes them (about 1.2 KB each, 12 MB).
EARLY_CHAPTERS = 10_000
#: What a reading process runs: its end of the pipe is the descriptor it is given, and the
#: first message the rest of :func:`reading.serve_batches`' arguments.
_READER = (
    "import sys; from multiprocessing.connection import Connection; "
    "from toshokan.sources.local.reading import serve_batches; "
    "pipe = Connection(int(sys.argv[1])); serve_batches(pipe, *pipe.recv())"
)
#: Chapters read ahead of the index at most while the scan rebuilds series at a commit:
#: their readings wait here (about 1.2 KB each, 12 MB).
WAITING_CHAPTERS = 10_000
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
        #: The running scan's reading processes once started, and its first chapters sent
        #: to them while the walk goes on (a first scan's).
        self._reading: _Reading | None = None
        self._early: _EarlyReading | None = None
        #: Chapters opened since this scanner was made (tests assert on it).
        self._lock = threading.Lock()
        #: Set to stop a running scan between two chapters (the host is shutting down).
        self.stop = threading.Event()
        #: The index's own files, never taken for library content if kept inside the root.
        self.own_files = index.files()

    def scan(self, only: set[str] | None = None, progress: Progress | None = None) -> ScanReport:
        """Bring the index up to date; ``only`` limits the scan to these top-level names."""
        with self._lock, self.index.writer() as db:
            try:
                # Into an empty index every chapter found is read: the reading processes
                # start as soon as the walk has found enough for them, and read while it
                # and the index's preparations go on.
                if self.workers >= 2 and _empty(db):
                    self._early = _EarlyReading(self._start_reading)
                found, walk_problems = self.walk(
                    only, None if self._early is None else self._early.add
                )
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
                    keep_reading=self._keep_reading,
                    read_series_json=self.read_series_json,
                    progress=progress,
                    cancelled=self.stop.is_set,
                    claims=shared,
                )
                report = update.run()
                self.name_files(db)
                return report
            finally:
                self._early = None
                if self._reading is not None:  # a call less for every rescan
                    self._stop_reading()

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

    def walk(
        self, only: set[str] | None = None, on_series: Callable[[FoundSeries], None] | None = None
    ) -> tuple[dict[str, FoundSeries], dict[str, str]]:
        """Every series and chapter candidate, and the files skipped while walking
        (``on_series`` is called with each series as the walk finds it)."""
        return walk(self.root, self.own_files, only, on_series)

    def read_chapters(self, chapters: list[FoundChapter]) -> Generator[PlainReading, None, None]:
        """Read these chapters, yielding each one's reading (its fields) in the same order.

        Opening chapters is nearly all of a first scan's time and each is
        independent, so a large scan reads them in worker processes (the GIL
        leaves threads no faster) while this thread writes the index. Closing
        the iterator early (a cancelled scan) cancels what has not started.
        """
        early, self._early = self._early, None
        if len(chapters) < PARALLEL_FROM or self.workers < 2:
            self._stop_reading()  # started during the walk, and not needed after all
            for chapter in chapters:
                yield self.read_chapter(chapter)
            return
        try:
            reading = None
            if early is not None and early.sent_first(chapters):
                # The walk's first chapters are these: their batches are read or on the way.
                reading, first, others = early.reading, [], chapters[early.batched :]
            if reading is None:
                self._stop_reading()  # whatever was sent early is not these chapters
                reading = self._start_reading()
                first, others = chapters[:READ_HERE_FIRST], chapters[READ_HERE_FIRST:]
            reading.batches += [
                others[n : n + BATCH_SIZE] for n in range(0, len(others), BATCH_SIZE)
            ]
            reading.send_ahead()
            # Read here while the workers start (spawning takes a moment): the index has
            # series to show from the first commit on.
            for chapter in first:
                yield self.read_chapter(chapter)
            for number, batch in enumerate(reading.batches):
                readings = reading.take(number)
                if readings is None:  # the worker failed or died: read the batch here
                    readings = [self.read_chapter(chapter) for chapter in batch]
                yield from readings
        finally:
            self._stop_reading()

    def _keep_reading(self) -> None:
        """Take the answers ready and hand out the next batches, while the scan rebuilds the
        series at a commit (a few hundred ms): the reading processes would idle meanwhile
        (their batches in hand last tens), with at most :data:`WAITING_CHAPTERS` read."""
        reading = self._reading
        if reading is not None and len(reading.answers) * BATCH_SIZE < WAITING_CHAPTERS:
            reading.collect(0)

    def _start_reading(self) -> "_Reading":
        """The reading processes of this scan, started on the first call."""
        if self._reading is None:
            self._reading = _Reading([self._start_worker() for _ in range(self.workers)])
        return self._reading

    def _stop_reading(self) -> None:
        if self._reading is not None:
            for worker in self._reading.workers:
                worker.stop()
            self._reading = None

    def _start_worker(self) -> "_Worker":
        # A new interpreter, not a fork (the host has threads, and their locks a fork would
        # copy), and not multiprocessing's spawn either: that imports the parent's main
        # module again in the child, under the toshokan command toshokan.cli and what it
        # imports, 0.25 s of CPU each. -P: the working directory (the library, perhaps) is
        # not put first on the module path, where a zipfile.py in it would be imported.
        ours, theirs = multiprocessing.Pipe()
        command = [sys.executable, "-P", "-c", _READER, str(theirs.fileno())]
        process = subprocess.Popen(command, pass_fds=(theirs.fileno(),))
        theirs.close()
        ours.send((self.root, self.default_language, self.comicinfo_limit))
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

    def __init__(self, process: "subprocess.Popen[bytes]", connection: Connection):
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

    def receive(self) -> dict[int, list[PlainReading] | None]:
        """The next answer, by its batch's number (every batch left, when it died)."""
        try:
            readings: list[PlainReading] | None = self.connection.recv()
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
        try:
            self.process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _empty(db: sqlite3.Connection) -> bool:
    """Whether the index holds no chapter yet (a first scan)."""
    return db.execute("SELECT 1 FROM chapters LIMIT 1").fetchone() is None


class _Reading:
    """The reading processes of a scan, the batches of chapters to hand them in turn, and
    their answers by batch number.

    A worker that answers is sent the next batch (one given less of the CPU gets fewer);
    answers wait here until the batches before them are taken, so the chapters keep their
    order, and no more than the batches in flight wait (memory stays bounded).
    """

    def __init__(self, workers: list[_Worker]):
        self.workers = workers
        self.batches: list[list[FoundChapter]] = []
        #: Batches sent so far (the first ones); the rest wait for a worker to answer.
        self.sent = 0
        self.answers: dict[int, list[PlainReading] | None] = {}

    def send_ahead(self) -> None:
        """Give each worker batches, in turn, until it has :data:`AHEAD` in hand."""
        for _ in range(AHEAD):
            for worker in self.workers:
                if worker.alive and len(worker.queued) < AHEAD and self.sent < len(self.batches):
                    self._send(worker)

    def collect(self, timeout: float | None) -> bool:
        """Take the answers ready within ``timeout``; False when no worker has a batch."""
        busy = {w.connection: w for w in self.workers if w.queued}
        if not busy:
            return False
        for ready in wait(list(busy), timeout):
            worker = busy[cast(Connection, ready)]
            self.answers.update(worker.receive())
            if worker.alive and self.sent < len(self.batches):
                self._send(worker)
        return True

    def take(self, number: int) -> list[PlainReading] | None:
        """Batch ``number``'s readings, once answered; None if its worker failed or died
        (or every worker did)."""
        while number not in self.answers and self.collect(None):
            pass
        return self.answers.pop(number, None)

    def _send(self, worker: _Worker) -> None:
        worker.send(self.sent, self.batches[self.sent])
        self.sent += 1


class _EarlyReading:
    """A first scan's first chapters, sent to the reading processes as the walk finds them.

    Into an empty index every chapter the walk finds is read, in the walk's order, so its
    first batches can be read while the walk and the index's preparations go on (without
    this, one core idled for both). The scan checks that its chapters begin with these
    before taking their readings.
    """

    def __init__(self, start: Callable[[], _Reading]):
        self.start = start
        self.reading: _Reading | None = None
        #: The chapters found so far, up to :data:`EARLY_CHAPTERS`, and how many are batched.
        self.found: list[FoundChapter] = []
        self.batched = 0

    def add(self, series: FoundSeries) -> None:
        """Called with each series found: batch its chapters, send what workers can take."""
        # Every series' chapters are made here, past the limit too: while the reading
        # processes have batches in hand, not after the walk, when they would wait for it.
        chapters = series.chapters
        room = EARLY_CHAPTERS - len(self.found)
        if room > 0:
            self.found += chapters[:room]
        if self.reading is None:
            if len(self.found) < PARALLEL_FROM:
                return
            self.reading = self.start()
        while len(self.found) - self.batched >= BATCH_SIZE:
            self.reading.batches.append(self.found[self.batched : self.batched + BATCH_SIZE])
            self.batched += BATCH_SIZE
        # Past the limit too, until every batch made here is sent: the limit is found
        # within the walk's first tenth, and the processes would then idle for the rest.
        if self.reading.sent < len(self.reading.batches):
            self.reading.collect(0)
            self.reading.send_ahead()

    def sent_first(self, chapters: list[FoundChapter]) -> bool:
        """Whether the batches made here are the first of ``chapters``."""
        return self.reading is not None and chapters[: self.batched] == self.found[: self.batched]
