"""The download queue in the host's database (SQLite, or PostgreSQL in the cluster).

One row per chapter to keep (``downloads``), however many readers keep its
series: it is downloaded once. A row is *claimed* by the process that downloads
it with one conditional update, under a lease it renews while it works; a lease
left by a process that died lapses (:data:`LEASE_SECONDS`) and the row is claimed
again, by any process; on the embedded engine, whose one process alone claims,
the claims of a process stopped or killed are released when the next begins
(:meth:`DownloadStore.release_others`). Claims take the queue's one row
(``download_queue``) first, which serialises them on PostgreSQL as SQLite's transactions are, so the limits
counted in the claim (chapters at once for the whole host, per source, one per
series) hold across replicas. The same row says whether the queue is paused, and
why.

States: ``queued`` (waiting, maybe until ``next_try``), ``running``, ``held`` (paused
by a reader), ``done``, ``failed`` (with a reason; retryable) and ``cancelled`` (never
queued again by a check).

The methods block (a database call); async code runs them in a worker thread.
"""

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toshokan.core.database import Cursor, Database

#: Seconds a claim lasts unless renewed; renewed every third of it while a chapter is kept.
LEASE_SECONDS = 30.0
QUEUE_ROW = "queue"
#: States a row can be steered out of, and what each action leads to.
QUEUED, RUNNING, HELD, DONE, FAILED, CANCELLED = (
    "queued",
    "running",
    "held",
    "done",
    "failed",
    "cancelled",
)
#: Why a reader's own downloads are paused.
READER = "reader"
#: Rows still to be downloaded (what the queue's length counts).
WAITING = (QUEUED, RUNNING, HELD)
#: The ``manga`` of a reader's keep of every series they follow from a source (no slug is
#: ``*``): a series the reader keeps on its own is kept as its own row says instead.
EVERY_SERIES = "*"
#: The keeps (``k``) of the download ``d``: its series' readers, on their own or by their keep
#: of every series they follow from the source.
_KEEPS_OF = (
    "keeps k WHERE k.source = d.source AND (k.manga = d.manga OR "
    f"(k.manga = '{EVERY_SERIES}' AND EXISTS (SELECT 1 FROM follows f WHERE "
    "f.reader = k.reader AND f.source = d.source AND f.manga = d.manga)))"
)
#: The downloads (``d``) of the series a reader (the one parameter) keeps, on their own or by
#: their keep of every series they follow from the source.
_KEPT_BY = f"EXISTS (SELECT 1 FROM {_KEEPS_OF} AND k.reader = ?)"
#: The ``download_queue`` row of a reader's pause of their own downloads is this and their name.
READER_ROW = "reader:"
#: A download runs for someone: a reader keeping its series has not paused their downloads
#: (or nobody keeps it any more, and it runs as queued). Shared rows run for whoever wants them.
_WANTED = (
    f"(NOT EXISTS (SELECT 1 FROM {_KEEPS_OF}) OR EXISTS (SELECT 1 FROM {_KEEPS_OF} AND NOT "
    f"EXISTS (SELECT 1 FROM download_queue q WHERE q.id = '{READER_ROW}' || k.reader "
    "AND q.paused IS NOT NULL)))"
)


@dataclass(frozen=True)
class Keep:
    """How a reader keeps a followed series (``manga`` :data:`EVERY_SERIES`: every series they
    follow from ``source``)."""

    reader: str
    source: str
    manga: str
    #: Languages kept (empty: any).
    languages: tuple[str, ...] = ()
    #: Groups preferred, in order, for a number several groups translated (empty: any).
    groups: tuple[str, ...] = ()
    #: Chapters that existed before, newest first, to keep as well (0: none).
    backfill: int = 0
    only_unread: bool = False
    since: float = 0.0


@dataclass(frozen=True)
class Download:
    """One chapter in the queue, as the queue's page and commands show it."""

    id: str
    source: str
    manga: str
    chapter: str
    series_title: str
    title: str
    number: float
    language: str
    scanlator: str
    state: str
    position: float
    attempts: int
    next_try: float
    reason: str | None
    error: str | None
    pages: int | None
    pages_done: int
    bytes: int
    path: str | None
    added: float
    finished: float | None


@dataclass(frozen=True)
class QueueState:
    """Whether the queue is paused: ``paused`` is ``operator``, ``no-space`` or
    ``not-writable`` (the keep folder's), None when it runs; of a reader's own downloads,
    ``reader`` (they paused them) or None."""

    paused: str | None
    message: str | None
    since: float | None


@dataclass(frozen=True)
class Candidate:
    """A chapter a check recorded, as the queue chooses among them."""

    chapter: str
    title: str
    number: float
    language: str
    scanlator: str
    kind: str
    found: float


_COLUMNS = (
    "id, source, manga, chapter, series_title, title, number, language, scanlator, state, "
    "position, attempts, next_try, reason, error, pages, pages_done, bytes, path, added, finished"
)


def _download(row: Sequence[Any]) -> Download:
    return Download(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        float(row[6]),
        row[7],
        row[8],
        row[9],
        float(row[10]),
        int(row[11]),
        float(row[12]),
        row[13],
        row[14],
        None if row[15] is None else int(row[15]),
        int(row[16]),
        int(row[17]),
        row[18],
        float(row[19]),
        None if row[20] is None else float(row[20]),
    )


def _keep(row: Sequence[Any]) -> Keep:
    reader, source, manga, languages, groups, backfill, only_unread, since = row
    return Keep(
        reader,
        source,
        manga,
        tuple(json.loads(languages)),
        tuple(json.loads(groups)),
        int(backfill),
        bool(only_unread),
        float(since),
    )


class DownloadStore:
    def __init__(self, database: Database):
        self.database = database
        with database.transaction() as cursor:
            cursor.execute(
                "INSERT INTO download_queue(id) VALUES(?) ON CONFLICT DO NOTHING", (QUEUE_ROW,)
            )

    # -- keeps -------------------------------------------------------------------------

    def keep(self, keep: Keep) -> None:
        with self.database.transaction() as cursor:
            cursor.execute(
                "INSERT INTO keeps(reader, source, manga, languages, groups, backfill, "
                "only_unread, since) VALUES(?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(reader, source, manga) DO UPDATE SET languages = excluded.languages, "
                "groups = excluded.groups, backfill = excluded.backfill, "
                "only_unread = excluded.only_unread",
                (
                    keep.reader,
                    keep.source,
                    keep.manga,
                    json.dumps(list(keep.languages)),
                    json.dumps(list(keep.groups)),
                    keep.backfill,
                    int(keep.only_unread),
                    keep.since or time.time(),
                ),
            )

    def unkeep(self, reader: str, source: str, manga: str) -> bool:
        with self.database.transaction() as cursor:
            cursor.execute(
                "DELETE FROM keeps WHERE reader = ? AND source = ? AND manga = ?",
                (reader, source, manga),
            )
            return cursor.rowcount > 0

    def keep_of(self, reader: str, source: str, manga: str) -> Keep | None:
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT reader, source, manga, languages, groups, backfill, only_unread, since "
                "FROM keeps WHERE reader = ? AND source = ? AND manga = ?",
                (reader, source, manga),
            )
            row = cursor.fetchone()
        return None if row is None else _keep(row)

    def keeps(self, source: str | None = None, manga: str | None = None) -> list[Keep]:
        """The keeps of followed series (of one series when named): each reader's own, else
        their keep of every series they follow from the source (without a backfill). A keep
        whose follow was removed is forgotten here."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "DELETE FROM keeps WHERE manga <> ? AND NOT EXISTS (SELECT 1 FROM follows f "
                "WHERE f.reader = keeps.reader AND f.source = keeps.source "
                "AND f.manga = keeps.manga)",
                (EVERY_SERIES,),
            )
            where = "AND k.source = ? AND k.manga = ?" if source is not None else ""
            cursor.execute(
                "SELECT reader, source, manga, languages, groups, backfill, only_unread, since "
                f"FROM keeps k WHERE k.manga <> ? {where}",
                (EVERY_SERIES, *((source, manga) if source is not None else ())),
            )
            own = [_keep(row) for row in cursor.fetchall()]
            where = "AND f.source = ? AND f.manga = ?" if source is not None else ""
            cursor.execute(
                "SELECT k.reader, k.source, f.manga, k.languages, k.groups, 0, k.only_unread, "
                "k.since FROM keeps k JOIN follows f ON f.reader = k.reader "
                f"AND f.source = k.source WHERE k.manga = ? {where} AND NOT EXISTS "
                "(SELECT 1 FROM keeps o WHERE o.reader = k.reader AND o.source = k.source "
                "AND o.manga = f.manga)",
                (EVERY_SERIES, *((source, manga) if source is not None else ())),
            )
            ruled = [_keep(row) for row in cursor.fetchall()]
        return sorted(own + ruled, key=lambda k: (k.source, k.manga, k.reader))

    def every_series(self, reader: str | None = None) -> list[Keep]:
        """Keeps of every series followed from a source (``reader``'s; None: every reader's)."""
        mine = "AND reader = ?" if reader is not None else ""
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT reader, source, manga, languages, groups, backfill, only_unread, since "
                f"FROM keeps WHERE manga = ? {mine} ORDER BY reader, source",
                (EVERY_SERIES, *((reader,) if reader is not None else ())),
            )
            return [_keep(row) for row in cursor.fetchall()]

    def followed_from(self, reader: str, source: str) -> list[str]:
        """The series ``reader`` follows from ``source``."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT manga FROM follows WHERE reader = ? AND source = ? ORDER BY manga",
                (reader, source),
            )
            return [row[0] for row in cursor.fetchall()]

    # -- choosing --------------------------------------------------------------------------

    def candidates(self, source: str, manga: str) -> tuple[str, list[Candidate]]:
        """The series' title and the chapters its checks recorded (not removed)."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT title FROM followed_series WHERE source = ? AND manga = ?", (source, manga)
            )
            row = cursor.fetchone()
            cursor.execute(
                "SELECT chapter, title, number, language, scanlator, kind, found "
                "FROM series_chapters WHERE source = ? AND manga = ? AND removed IS NULL "
                "ORDER BY number DESC, found",
                (source, manga),
            )
            found = [
                Candidate(r[0], r[1], float(r[2]), r[3], r[4], r[5], float(r[6]))
                for r in cursor.fetchall()
            ]
        return ("" if row is None else str(row[0])), found

    def finished_by(self, reader: str, source: str, manga: str) -> set[str]:
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT chapter FROM progress WHERE reader = ? AND source = ? AND manga = ? "
                "AND finished = 1",
                (reader, source, manga),
            )
            return {row[0] for row in cursor.fetchall()}

    def taken(self, source: str, manga: str) -> tuple[set[str], set[float]]:
        """Chapters queued or kept already (not cancelled), and their numbers."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT chapter, number FROM downloads WHERE source = ? AND manga = ? "
                "AND state <> ?",
                (source, manga, CANCELLED),
            )
            rows = cursor.fetchall()
            cursor.execute(
                "SELECT k.chapter, c.number FROM kept_chapters k LEFT JOIN series_chapters c "
                "ON c.source = k.source AND c.manga = k.manga AND c.chapter = k.chapter "
                "WHERE k.source = ? AND k.manga = ?",
                (source, manga),
            )
            rows += cursor.fetchall()
        return {r[0] for r in rows}, {float(r[1]) for r in rows if r[1] is not None}

    def cancelled(self, source: str, manga: str) -> set[str]:
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT chapter FROM downloads WHERE source = ? AND manga = ? AND state = ?",
                (source, manga, CANCELLED),
            )
            return {row[0] for row in cursor.fetchall()}

    def enqueue(self, source: str, manga: str, title: str, chosen: Sequence[Candidate]) -> int:
        """Queue ``chosen`` (after everything queued), skipping chapters queued before; how
        many were queued."""
        now = time.time()
        queued = 0
        with self.database.transaction() as cursor:
            cursor.execute("SELECT max(position) FROM downloads")
            last = cursor.fetchone()[0]
            position = max(now, float(last) + 1 if last is not None else now)
            # Oldest number first: a series is read in order.
            for candidate in sorted(chosen, key=lambda c: c.number):
                cursor.execute(
                    f"INSERT INTO downloads({_COLUMNS}) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                    "?, ?, NULL, NULL, NULL, 0, 0, NULL, ?, NULL) "
                    "ON CONFLICT(source, manga, chapter) DO NOTHING",
                    (
                        uuid.uuid4().hex,
                        source,
                        manga,
                        candidate.chapter,
                        title,
                        candidate.title,
                        candidate.number,
                        candidate.language,
                        candidate.scanlator,
                        QUEUED,
                        position,
                        0,
                        now,
                        now,
                    ),
                )
                if cursor.rowcount > 0:
                    queued += 1
                    position += 1
        return queued

    # -- the queue's state -------------------------------------------------------------------

    def state(self) -> QueueState:
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT paused, message, since FROM download_queue WHERE id = ?", (QUEUE_ROW,)
            )
            row = cursor.fetchone()
        if row is None:
            return QueueState(None, None, None)
        return QueueState(row[0], row[1], None if row[2] is None else float(row[2]))

    def pause(self, reason: str, message: str) -> bool:
        """Pause the queue; whether it ran (a pause already in force keeps its reason, unless
        the operator's replaces the folder's)."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE download_queue SET paused = ?, message = ?, since = ? "
                "WHERE id = ? AND (paused IS NULL OR (? = 'operator' AND paused <> 'operator'))",
                (reason, message, time.time(), QUEUE_ROW, reason),
            )
            return cursor.rowcount > 0

    def resume(self, reasons: Sequence[str] | None = None) -> bool:
        """Let the queue run (only when paused for one of ``reasons``, when named)."""
        condition = ""
        if reasons is not None:
            condition = f"AND paused IN ({', '.join('?' for _ in reasons)})"
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE download_queue SET paused = NULL, message = NULL, since = NULL "
                f"WHERE id = ? AND paused IS NOT NULL {condition}",
                (QUEUE_ROW, *(reasons or ())),
            )
            return cursor.rowcount > 0

    def reader_state(self, reader: str) -> QueueState:
        """Whether ``reader`` paused their own downloads."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT paused, message, since FROM download_queue WHERE id = ?",
                (READER_ROW + reader,),
            )
            row = cursor.fetchone()
        if row is None:
            return QueueState(None, None, None)
        return QueueState(row[0], row[1], None if row[2] is None else float(row[2]))

    def pause_reader(self, reader: str) -> bool:
        """Pause the downloads ``reader`` keeps (a chapter another reader keeps too still runs
        for them); whether they ran."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "INSERT INTO download_queue(id, paused, message, since) VALUES(?, ?, ?, ?) "
                "ON CONFLICT(id) DO NOTHING",
                (READER_ROW + reader, READER, "paused by the reader", time.time()),
            )
            return cursor.rowcount > 0

    def resume_reader(self, reader: str) -> bool:
        """Let ``reader``'s downloads run again; whether they were paused."""
        with self.database.transaction() as cursor:
            cursor.execute("DELETE FROM download_queue WHERE id = ?", (READER_ROW + reader,))
            return cursor.rowcount > 0

    # -- working it --------------------------------------------------------------------------

    def due(self, limit: int) -> list[Download]:
        """Rows that may be claimed now, first in the queue first (a running row whose lease
        lapsed counts: its process died), but none that only readers who paused their own
        downloads keep."""
        now = time.time()
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT {', '.join('d.' + c for c in _COLUMNS.split(', '))} FROM downloads d "
                "WHERE ((d.state = ? AND d.next_try <= ?) OR (d.state = ? AND d.lease_until < ?)) "
                f"AND {_WANTED} ORDER BY d.position LIMIT ?",
                (QUEUED, now, RUNNING, now, limit),
            )
            return [_download(row) for row in cursor.fetchall()]

    def running(self) -> tuple[int, dict[str, int], set[tuple[str, str]]]:
        """Rows being downloaded now (live leases): how many, by source, and their series."""
        with self.database.transaction() as cursor:
            return _running(cursor, time.time())

    def claim(self, download: str, token: str, *, overall: int, per_source: int) -> Download | None:
        """Take ``download`` to keep it now, under a lease: only while the queue runs, the row
        is due, someone keeping it has not paused their downloads, and the host's limits leave
        room. The row, or None."""
        now = time.time()
        with self.database.transaction() as cursor:
            # The queue's row first: claims wait for each other here, on either engine.
            cursor.execute(
                "UPDATE download_queue SET id = id WHERE id = ? AND paused IS NULL", (QUEUE_ROW,)
            )
            if cursor.rowcount == 0:
                return None  # paused
            cursor.execute(f"SELECT {_COLUMNS} FROM downloads WHERE id = ?", (download,))
            row = cursor.fetchone()
            if row is None:
                return None
            found = _download(row)
            count, by_source, series = _running(cursor, now)
            if count >= overall or by_source.get(found.source, 0) >= per_source:
                return None
            if (found.source, found.manga) in series:
                return None  # one writer per series
            cursor.execute(f"SELECT 1 FROM downloads d WHERE d.id = ? AND {_WANTED}", (download,))
            if cursor.fetchone() is None:
                return None  # its readers paused their downloads
            cursor.execute(
                "UPDATE downloads SET state = ?, lease = ?, lease_until = ?, pages_done = 0, "
                "path = NULL WHERE id = ? AND ((state = ? AND next_try <= ?) "
                "OR (state = ? AND lease_until < ?))",
                (RUNNING, token, now + LEASE_SECONDS, download, QUEUED, now, RUNNING, now),
            )
            if cursor.rowcount == 0:
                return None
        return found

    def release_others(self, holder: str) -> int:
        """Rows being kept under a claim not ``holder``'s back in the queue at once (their
        process is known to be gone); how many."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE downloads SET state = ?, lease = NULL, lease_until = NULL, next_try = ?, "
                "pages_done = 0, path = NULL WHERE state = ? AND (lease IS NULL OR lease NOT LIKE ?)",
                (QUEUED, time.time(), RUNNING, f"{holder}.%"),
            )
            return cursor.rowcount

    def renew(
        self, download: str, token: str, pages: int | None, pages_done: int, size: int
    ) -> bool:
        """Extend the lease and record progress; False when the row is not ours any more
        (cancelled or held by a person, or its lease lapsed and another took it)."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE downloads SET lease_until = ?, pages = ?, pages_done = ?, bytes = ? "
                "WHERE id = ? AND lease = ? AND state = ?",
                (time.time() + LEASE_SECONDS, pages, pages_done, size, download, token, RUNNING),
            )
            return cursor.rowcount > 0

    def publishing(self, download: str, token: str, path: str) -> bool:
        """The chapter, written aside, is about to be moved into place at ``path``: from now on
        it is not cancelled or held any more (it finishes kept). False when the row is not
        ours any more: it was cancelled or held first, and must not be written."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE downloads SET path = ?, lease_until = ? "
                "WHERE id = ? AND lease = ? AND state = ?",
                (path, time.time() + LEASE_SECONDS, download, token, RUNNING),
            )
            return cursor.rowcount > 0

    def _end(
        self, cursor: Cursor, download: str, token: str, sets: str, values: Sequence[Any]
    ) -> bool:
        cursor.execute(
            f"UPDATE downloads SET lease = NULL, lease_until = NULL, {sets} "
            "WHERE id = ? AND lease = ? AND state = ?",
            (*values, download, token, RUNNING),
        )
        return cursor.rowcount > 0

    def done(self, download: str, token: str, path: str, pages: int, size: int) -> bool:
        with self.database.transaction() as cursor:
            return self._end(
                cursor,
                download,
                token,
                "state = ?, path = ?, pages = ?, pages_done = ?, bytes = ?, finished = ?, "
                "reason = NULL, error = NULL",
                (DONE, path, pages, pages, size, time.time()),
            )

    def requeue(self, download: str, token: str, at: float | None = None) -> bool:
        """Back in the queue as it was (its try did not count: the folder's fault, or the
        process stopping)."""
        with self.database.transaction() as cursor:
            return self._end(
                cursor,
                download,
                token,
                "state = ?, next_try = ?, pages_done = 0, path = NULL",
                (QUEUED, at or time.time()),
            )

    def retry_later(
        self, download: str, token: str, attempts: int, reason: str, error: str, at: float
    ) -> bool:
        with self.database.transaction() as cursor:
            return self._end(
                cursor,
                download,
                token,
                "state = ?, attempts = ?, reason = ?, error = ?, next_try = ?, pages_done = 0, "
                "path = NULL",
                (QUEUED, attempts, reason, error, at),
            )

    def failed(self, download: str, token: str, attempts: int, reason: str, error: str) -> bool:
        with self.database.transaction() as cursor:
            return self._end(
                cursor,
                download,
                token,
                "state = ?, attempts = ?, reason = ?, error = ?, finished = ?, path = NULL",
                (FAILED, attempts, reason, error, time.time()),
            )

    # -- what people see and steer -------------------------------------------------------------

    def listing(
        self, reader: str | None, states: Sequence[str], limit: int, offset: int
    ) -> list[Download]:
        """Rows in ``states`` (of the series ``reader`` keeps; None: all), in queue order."""
        marks = ", ".join("?" for _ in states)
        mine = f"AND {_KEPT_BY}"
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT {', '.join('d.' + c for c in _COLUMNS.split(', '))} FROM downloads d "
                f"WHERE d.state IN ({marks}) {mine if reader is not None else ''} "
                "ORDER BY CASE WHEN d.finished IS NULL THEN 0 ELSE 1 END, d.position, "
                "d.finished DESC LIMIT ? OFFSET ?",
                (*states, *((reader,) if reader is not None else ()), limit, offset),
            )
            return [_download(row) for row in cursor.fetchall()]

    def counts(self, reader: str | None = None) -> tuple[dict[str, int], dict[str, int]]:
        """Rows by state, and failed rows by reason."""
        mine = f"WHERE {_KEPT_BY}"
        where = mine if reader is not None else ""
        parameters = (reader,) if reader is not None else ()
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT d.state, count(*) FROM downloads d {where} GROUP BY d.state", parameters
            )
            states = {row[0]: int(row[1]) for row in cursor.fetchall()}
            and_failed = f"{where} {'AND' if where else 'WHERE'} d.state = ?"
            cursor.execute(
                f"SELECT d.reason, count(*) FROM downloads d {and_failed} GROUP BY d.reason",
                (*parameters, FAILED),
            )
            reasons = {str(row[0]): int(row[1]) for row in cursor.fetchall()}
        return states, reasons

    def progress(self, reader: str | None = None) -> tuple[int, int, float]:
        """How far the queue is since it was last empty: chapters kept since its oldest
        waiting row was queued, chapters waiting, and the share of their pages kept so far."""
        mine = f"AND {_KEPT_BY}"
        where = mine if reader is not None else ""
        parameters = (reader,) if reader is not None else ()
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT min(d.added), count(*), "
                "sum(CASE WHEN d.pages > 0 THEN 1.0 * d.pages_done / d.pages ELSE 0 END) "
                f"FROM downloads d WHERE d.state IN (?, ?, ?) {where}",
                (*WAITING, *parameters),
            )
            oldest, waiting, partly = cursor.fetchone()
            if not waiting:
                return 0, 0, 0.0
            cursor.execute(
                f"SELECT count(*) FROM downloads d WHERE d.state = ? AND d.finished >= ? {where}",
                (DONE, oldest, *parameters),
            )
            done = int(cursor.fetchone()[0])
        return done, int(waiting), float(partly or 0.0)

    def get(self, download: str) -> Download | None:
        with self.database.transaction() as cursor:
            cursor.execute(f"SELECT {_COLUMNS} FROM downloads WHERE id = ?", (download,))
            row = cursor.fetchone()
        return None if row is None else _download(row)

    def keeps_series(self, reader: str, source: str, manga: str) -> bool:
        """Whether ``reader`` keeps the series, on its own or by their keep of the source."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT 1 FROM keeps k WHERE k.reader = ? AND k.source = ? AND (k.manga = ? OR "
                "(k.manga = ? AND EXISTS (SELECT 1 FROM follows f WHERE f.reader = k.reader "
                "AND f.source = k.source AND f.manga = ?)))",
                (reader, source, manga, EVERY_SERIES, manga),
            )
            return cursor.fetchone() is not None

    def steer(self, download: str, action: str) -> bool:
        """``hold`` (a waiting row), ``release`` (a held one), ``retry`` (a failed or cancelled
        one, from its first try), ``cancel`` (anything not done: a running row's process
        stops at its next renewal, or before its chapter is moved into place). A running row
        whose chapter is being moved into place (its path known) is neither held nor
        cancelled: it finishes kept. Whether the row changed."""
        now = time.time()
        changes: dict[str, tuple[str, tuple[str, ...], tuple[Any, ...]]] = {
            "hold": ("state = ?", (QUEUED, RUNNING), (HELD,)),
            "release": ("state = ?, next_try = ?", (HELD,), (QUEUED, now)),
            "retry": (
                "state = ?, attempts = 0, next_try = ?, reason = NULL, error = NULL, "
                "finished = NULL",
                (FAILED, CANCELLED),
                (QUEUED, now),
            ),
            "cancel": (
                "state = ?, finished = ?",
                (QUEUED, RUNNING, HELD, FAILED),
                (CANCELLED, now),
            ),
        }
        sets, states, values = changes[action]
        marks = ", ".join("?" for _ in states)
        with self.database.transaction() as cursor:
            cursor.execute(
                f"UPDATE downloads SET {sets}, lease = NULL, lease_until = NULL "
                f"WHERE id = ? AND state IN ({marks}) AND NOT (state = ? AND path IS NOT NULL)",
                (*values, download, *states, RUNNING),
            )
            return cursor.rowcount > 0

    def retry_failed(self, reader: str | None) -> int:
        """Every failed row (of ``reader``'s series) back in the queue; how many."""
        failed = self.listing(reader, (FAILED,), 100_000, 0)
        return sum(self.steer(d.id, "retry") for d in failed)

    def move(self, download: str, where: str) -> bool:
        """Move a waiting row to the ``top`` or ``bottom`` of the queue, or one place ``up`` or
        ``down``; whether it moved."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT position FROM downloads WHERE id = ? AND state IN (?, ?)",
                (download, QUEUED, HELD),
            )
            row = cursor.fetchone()
            if row is None:
                return False
            position = float(row[0])
            if where in ("top", "bottom"):
                extreme = "min" if where == "top" else "max"
                cursor.execute(f"SELECT {extreme}(position) FROM downloads")
                edge = float(cursor.fetchone()[0])
                new = edge - 1 if where == "top" else edge + 1
            else:
                compare, order = ("<", "DESC") if where == "up" else (">", "ASC")
                cursor.execute(
                    f"SELECT id, position FROM downloads WHERE position {compare} ? "
                    f"AND state IN (?, ?) ORDER BY position {order} LIMIT 1",
                    (position, QUEUED, HELD),
                )
                other = cursor.fetchone()
                if other is None:
                    return False
                new = float(other[1])
                cursor.execute(
                    "UPDATE downloads SET position = ? WHERE id = ?", (position, other[0])
                )
            cursor.execute("UPDATE downloads SET position = ? WHERE id = ?", (new, download))
            return True


def _running(cursor: Cursor, now: float) -> tuple[int, dict[str, int], set[tuple[str, str]]]:
    cursor.execute(
        "SELECT source, manga FROM downloads WHERE state = ? AND lease_until >= ?", (RUNNING, now)
    )
    rows = cursor.fetchall()
    by_source: dict[str, int] = {}
    for source, _ in rows:
        by_source[source] = by_source.get(source, 0) + 1
    return len(rows), by_source, {(r[0], r[1]) for r in rows}
