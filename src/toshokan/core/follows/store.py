"""Follows and followed series in the host's database (SQLite, or PostgreSQL in the cluster).

A *follow* is a reader's; a *followed series* is the host's, one row however
many readers follow it, so a series followed by a hundred readers is checked
once. The row carries the schedule (``next_check``) and, while a check runs,
its *lease*: a check takes the lease with one conditional update and only then
asks the upstream, so two processes (two replicas, a worker and a command) never
check one series at once, and a lease left by a process that died lapses by
itself (:data:`LEASE_SECONDS` after the upstream deadline). A scheduled check
also takes it only while the series is still due, so a series is checked once
per interval however often its job was queued or run again.

The methods block (a database call); async code runs them in a worker thread.
"""

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toshokan.core.database import Database
from toshokan.core.ids import JOINED, MANGA

#: Seconds a lease outlives the upstream deadline of the check that holds it.
LEASE_MARGIN = 15.0


@dataclass(frozen=True)
class Series:
    """A followed series as the host keeps it."""

    source: str
    manga: str
    title: str
    publication: str
    state: str
    next_check: float
    last_check: float | None
    last_change: float | None
    failures: int
    error: str | None


@dataclass(frozen=True)
class Followed:
    """One of a reader's follows: the series, and since when they follow it."""

    series: Series
    since: float


_SERIES = (
    "s.source, s.manga, s.title, s.publication, s.state, s.next_check, s.last_check, "
    "s.last_change, s.failures, s.error"
)


def _series(row: Sequence[Any]) -> Series:
    source, manga, title, publication, state, next_check, last_check, last_change = row[:8]
    failures, error = row[8:10]
    return Series(
        source,
        manga,
        title,
        publication,
        state,
        float(next_check),
        None if last_check is None else float(last_check),
        None if last_change is None else float(last_change),
        int(failures),
        error,
    )


class FollowStore:
    def __init__(self, database: Database):
        self.database = database

    # -- readers' follows --------------------------------------------------------------

    def follow(self, reader: str, source: str, manga: str, title: str, publication: str) -> bool:
        """Follow the series (first checked at once when no one followed it); whether the
        reader did not follow it already."""
        now = time.time()
        with self.database.transaction() as cursor:
            cursor.execute(
                "INSERT INTO followed_series(source, manga, title, publication, state, "
                "next_check, failures) VALUES(?, ?, ?, ?, 'new', ?, 0) "
                "ON CONFLICT(source, manga) DO UPDATE SET title = excluded.title, "
                "publication = excluded.publication",
                (source, manga, title, publication, now),
            )
            cursor.execute(
                "INSERT INTO follows(reader, source, manga, since) VALUES(?, ?, ?, ?) "
                "ON CONFLICT(reader, source, manga) DO NOTHING",
                (reader, source, manga, now),
            )
            return cursor.rowcount > 0

    def unfollow(self, reader: str, source: str, manga: str) -> bool:
        """Stop following; a series no one follows any more is forgotten with what its checks
        found (following it again starts from what exists then). Whether it was followed."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "DELETE FROM follows WHERE reader = ? AND source = ? AND manga = ?",
                (reader, source, manga),
            )
            followed = cursor.rowcount > 0
            _forget_unfollowed(cursor)
        return followed

    def follows_of(self, reader: str) -> list[Followed]:
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT {_SERIES}, f.since FROM follows f JOIN followed_series s "
                "ON s.source = f.source AND s.manga = f.manga WHERE f.reader = ? "
                "ORDER BY s.title, s.source, s.manga",
                (reader,),
            )
            rows = cursor.fetchall()
        return [Followed(_series(row[:10]), float(row[10])) for row in rows]

    def followed(self, reader: str, source: str, manga: str) -> Followed | None:
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT {_SERIES}, f.since FROM follows f JOIN followed_series s "
                "ON s.source = f.source AND s.manga = f.manga "
                "WHERE f.reader = ? AND f.source = ? AND f.manga = ?",
                (reader, source, manga),
            )
            row = cursor.fetchone()
        return None if row is None else Followed(_series(row[:10]), float(row[10]))

    def series(self, source: str, manga: str) -> Series | None:
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT {_SERIES} FROM followed_series s WHERE s.source = ? AND s.manga = ?",
                (source, manga),
            )
            row = cursor.fetchone()
        return None if row is None else _series(row)

    def all_series(self) -> list[Series]:
        with self.database.transaction() as cursor:
            cursor.execute(f"SELECT {_SERIES} FROM followed_series s ORDER BY s.source, s.manga")
            return [_series(row) for row in cursor.fetchall()]

    def counts(self) -> tuple[int, int, float | None]:
        """How many follows and followed series there are, and when the next check is due."""
        with self.database.transaction() as cursor:
            cursor.execute("SELECT count(*) FROM follows")
            follows = int(cursor.fetchone()[0])
            cursor.execute("SELECT count(*), min(next_check) FROM followed_series")
            series, next_check = cursor.fetchone()
        return follows, int(series), None if next_check is None else float(next_check)

    # -- the schedule ----------------------------------------------------------------------

    def due(self, until: float, sources: Sequence[str], limit: int) -> list[tuple[str, str, float]]:
        """Series of ``sources`` due by ``until`` and not being checked: (source, manga, due)."""
        if not sources:
            return []
        marks = ", ".join("?" for _ in sources)
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT source, manga, next_check FROM followed_series "
                f"WHERE next_check <= ? AND source IN ({marks}) "
                "AND (lease_until IS NULL OR lease_until < ?) ORDER BY next_check LIMIT ?",
                (until, *sources, time.time(), limit),
            )
            return [(row[0], row[1], float(row[2])) for row in cursor.fetchall()]

    def take(self, source: str, manga: str, token: str, seconds: float, *, due: bool) -> bool:
        """Take the series' lease for ``seconds``: only when no one holds it, and with ``due``
        only while the series is due (a scheduled check). Whether it is ours."""
        now = time.time()
        condition = "AND next_check <= ?" if due else ""
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE followed_series SET lease = ?, lease_until = ? "
                "WHERE source = ? AND manga = ? AND (lease_until IS NULL OR lease_until < ?) "
                f"{condition}",
                (token, now + seconds, source, manga, now, *((now + 1,) if due else ())),
            )
            return cursor.rowcount > 0

    def take_many(
        self, source: str, mangas: Sequence[str], token: str, seconds: float, *, due: bool
    ) -> list[str]:
        """:meth:`take` for each of ``mangas`` at once; those taken."""
        if not mangas:
            return []
        now = time.time()
        condition = "AND next_check <= ?" if due else ""
        marks = ", ".join("?" for _ in mangas)
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE followed_series SET lease = ?, lease_until = ? "
                f"WHERE source = ? AND manga IN ({marks}) "
                f"AND (lease_until IS NULL OR lease_until < ?) {condition} RETURNING manga",
                (token, now + seconds, source, *mangas, now, *((now + 1,) if due else ())),
            )
            return [row[0] for row in cursor.fetchall()]

    def renew(self, source: str, manga: str, token: str, seconds: float) -> bool:
        """Hold the lease ``token`` holds ``seconds`` more (a series checked late in a group of
        checks); whether it is still ours."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE followed_series SET lease_until = ? "
                "WHERE source = ? AND manga = ? AND lease = ? AND lease_until >= ?",
                (time.time() + seconds, source, manga, token, time.time()),
            )
            return cursor.rowcount > 0

    def marks(self, source: str, mangas: Sequence[str]) -> dict[str, tuple[Series, str, float]]:
        """The series of ``mangas`` whose last check read them (state ``ok``) with a mark: each
        with that mark and when its chapters were last read in full."""
        if not mangas:
            return {}
        marks = ", ".join("?" for _ in mangas)
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT {_SERIES}, s.mark, s.full_check FROM followed_series s "
                f"WHERE s.source = ? AND s.manga IN ({marks}) AND s.state = 'ok' "
                "AND s.mark IS NOT NULL AND s.full_check IS NOT NULL",
                (source, *mangas),
            )
            rows = cursor.fetchall()
        return {row[1]: (_series(row[:10]), row[10], float(row[11])) for row in rows}

    def release(self, source: str, manga: str, token: str) -> None:
        """Let go of a lease without recording a check (the source is not served)."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE followed_series SET lease = NULL, lease_until = NULL "
                "WHERE source = ? AND manga = ? AND lease = ?",
                (source, manga, token),
            )

    def recently_checked(self, source: str, manga: str, seconds: float) -> bool:
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT 1 FROM followed_series WHERE source = ? AND manga = ? "
                "AND last_check IS NOT NULL AND last_check > ?",
                (source, manga, time.time() - seconds),
            )
            return cursor.fetchone() is not None

    def serving_follows(self, reader: str | None, sources: Sequence[str]) -> list[tuple[str, str]]:
        """The series of ``sources`` that ``reader`` (None: anyone) follows."""
        if not sources:
            return []
        marks = ", ".join("?" for _ in sources)
        by_reader = (
            "AND EXISTS (SELECT 1 FROM follows f WHERE f.reader = ? "
            "AND f.source = followed_series.source AND f.manga = followed_series.manga)"
        )
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT source, manga FROM followed_series WHERE source IN ({marks}) "
                f"{by_reader if reader is not None else ''} ORDER BY source, manga",
                (*sources, *((reader,) if reader is not None else ())),
            )
            return [(row[0], row[1]) for row in cursor.fetchall()]


def _forget_unfollowed(cursor: Any) -> None:
    """Drop the series no reader follows any more, with what their checks found."""
    for table in ("series_chapters", "followed_series"):
        cursor.execute(
            f"DELETE FROM {table} WHERE NOT EXISTS (SELECT 1 FROM follows f "
            f"WHERE f.source = {table}.source AND f.manga = {table}.manga)"
        )


def merge_series(cursor: Any, copy: tuple[str, str], original: tuple[str, str]) -> int:
    """The follows of ``copy`` (a kept series, followed before it was known as one) become
    follows of its ``original``: each reader follows the one series once (their earlier
    follow's date kept), and hears of it where they chose to hear of the copy. How many
    follows moved. In the caller's transaction."""
    _retarget(cursor, copy, original)
    cursor.execute("SELECT count(*) FROM follows WHERE source = ? AND manga = ?", copy)
    moved = int(cursor.fetchone()[0])
    if not moved:
        return 0
    cursor.execute(
        "INSERT INTO followed_series(source, manga, title, publication, state, next_check, "
        "failures) SELECT ?, ?, title, publication, 'new', ?, 0 FROM followed_series "
        "WHERE source = ? AND manga = ? ON CONFLICT(source, manga) DO NOTHING",
        (*original, time.time(), *copy),
    )
    cursor.execute(
        "INSERT INTO follows(reader, source, manga, since) SELECT reader, ?, ?, since "
        "FROM follows WHERE source = ? AND manga = ? "
        "ON CONFLICT(reader, source, manga) DO UPDATE SET since = excluded.since "
        "WHERE excluded.since < follows.since",
        (*original, *copy),
    )
    cursor.execute("DELETE FROM follows WHERE source = ? AND manga = ?", copy)
    _forget_unfollowed(cursor)
    return moved


def _retarget(cursor: Any, copy: tuple[str, str], original: tuple[str, str]) -> None:
    """Notification targets limited to ``copy`` are limited to its ``original`` instead (once,
    if they named both): the copy's news are the original's now, found by the original's
    checks. ``series`` is as :class:`~toshokan.core.follows.notify.Targets` keeps it, a JSON
    list of ``source/manga``, sorted."""
    was, becomes = MANGA.pack(JOINED, *copy), MANGA.pack(JOINED, *original)
    # A pattern that matches every list naming the copy (and maybe a few more: ``_`` matches
    # any character), so that targets of other series are not read at every tie.
    cursor.execute(
        "SELECT id, series FROM notify_targets WHERE series LIKE ?", (f"%{json.dumps(was)}%",)
    )
    for target, listed in cursor.fetchall():
        series = set(json.loads(listed))
        if was in series:
            series = (series - {was}) | {becomes}
            cursor.execute(
                "UPDATE notify_targets SET series = ? WHERE id = ?",
                (json.dumps(sorted(series)), target),
            )


def forget_reader(cursor: Any, reader: str) -> None:
    """A removed reader's follows and notification targets (in their removal's transaction)."""
    cursor.execute("DELETE FROM follows WHERE reader = ?", (reader,))
    cursor.execute("DELETE FROM notify_targets WHERE reader = ?", (reader,))
    _forget_unfollowed(cursor)
