"""What the checks found, in the host's database: chapters seen, new ones, removed ones, and
the batches of checks their news is announced by.

A check's result is recorded in one transaction with the end of its lease (a
check whose lease was lost records nothing) and its batch's count: a check
killed midway records nothing and is redone; one that finished is never counted
twice. The first check of a series records what exists (``known``); every
chapter slug seen after it is new: a ``chapter``, or a ``version`` when a
chapter of its number was known (another group or language). A chapter the
upstream stops listing is marked removed (when the listing was whole), never
deleted, and unmarked if it comes back.

*Updates* are a reader's view: the new chapters of the series they follow,
found after they followed it, newest found first, each unread unless the
progress store says the reader finished it (on any face).
"""

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toshokan.core.database import Database

#: What a chapter was when first seen.
KNOWN, CHAPTER, VERSION = "known", "chapter", "version"


@dataclass(frozen=True)
class Seen:
    """A chapter as a check saw it."""

    slug: str
    title: str
    number: float
    language: str
    scanlator: str
    date: float
    pages: int | None = None


@dataclass(frozen=True)
class Result:
    """What one check of one series came to."""

    source: str
    manga: str
    token: str
    #: ``ok`` (the listing was read), ``gone`` (the upstream says the series does not
    #: exist), ``failing`` (the upstream failed; checked again sooner than usual).
    state: str
    next_check: float
    chapters: Sequence[Seen] = ()
    #: Whether ``chapters`` is every chapter the source lists (then one missing was removed).
    complete: bool = False
    error: str | None = None
    batch: str | None = None
    #: The series' mark when it was checked (:meth:`toshokan.sdk.Source.marks`), if any.
    mark: str | None = None
    #: Whether its chapters were read (``chapters`` is what the source lists); otherwise its
    #: mark had not moved and nothing was asked of it.
    read: bool = True


@dataclass(frozen=True)
class Recorded:
    """What recording a check changed."""

    new: int
    removed: int
    #: Whether this check was the last of its batch, which is now to be announced.
    finished_batch: bool
    #: The chapters it found new.
    added: tuple[Seen, ...] = ()


@dataclass(frozen=True)
class Update:
    """A new chapter of a followed series, as a reader sees it."""

    source: str
    manga: str
    chapter: str
    title: str
    number: float
    language: str
    scanlator: str
    date: float
    pages: int | None
    found: float
    kind: str
    removed: float | None
    series_title: str
    series_state: str
    unread: bool


class FoundStore:
    def __init__(self, database: Database):
        self.database = database

    # -- recording checks ------------------------------------------------------------------

    def record(self, result: Result) -> Recorded | None:
        """Record ``result`` and end its lease; None (nothing recorded) when the lease is not
        the check's any more (it lapsed and another check took it, or the series was
        unfollowed)."""
        with self.database.transaction() as cursor:
            return _record(cursor, result, time.time())

    def record_many(self, results: Sequence[Result]) -> list[Recorded | None]:
        """:meth:`record` for each of ``results``, in one transaction (checks whose marks had
        not moved: a line each)."""
        with self.database.transaction() as cursor:
            now = time.time()
            return [_record(cursor, result, now) for result in results]

    def skip(self, batch: str | None, checks: int = 1) -> bool:
        """``checks`` checks of ``batch`` that did not happen (another held the series, or it
        was not due any more); whether that finished the batch."""
        if batch is None or not checks:
            return False
        with self.database.transaction() as cursor:
            return _count(cursor, batch, 0, False, checked=0, checks=checks)

    # -- batches ---------------------------------------------------------------------------

    def open_batch(self, batch: str, kind: str) -> None:
        with self.database.transaction() as cursor:
            cursor.execute(
                "INSERT INTO check_batches(id, kind, started, pending, sealed, checked, found, "
                "failed) VALUES(?, ?, ?, 0, 0, 0, 0, 0)",
                (batch, kind, time.time()),
            )

    def seal(self, batch: str, checks: int) -> bool:
        """``checks`` were queued for ``batch``, all of them now; whether it is finished."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE check_batches SET sealed = 1, pending = pending + ? WHERE id = ?",
                (checks, batch),
            )
            return _finish(cursor, batch)

    def seal_abandoned(self, older_than: float) -> list[str]:
        """Batches whose queueing never completed (the process died midway): sealed with what
        was queued, and those now finished."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT id FROM check_batches WHERE sealed = 0 AND started < ?", (older_than,)
            )
            batches = [row[0] for row in cursor.fetchall()]
            finished = []
            for batch in batches:
                cursor.execute("UPDATE check_batches SET sealed = 1 WHERE id = ?", (batch,))
                if _finish(cursor, batch):
                    finished.append(batch)
            cursor.execute(
                "DELETE FROM check_batches WHERE finished IS NOT NULL AND finished < ?",
                (time.time() - 7 * 86400,),
            )
        return finished

    def batch(self, batch: str) -> dict[str, Any] | None:
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT kind, started, pending, sealed, finished, checked, found, failed "
                "FROM check_batches WHERE id = ?",
                (batch,),
            )
            row = cursor.fetchone()
        if row is None:
            return None
        kind, started, pending, sealed, finished, checked, found, failed = row
        return {
            "id": batch,
            "kind": kind,
            "started": float(started),
            "pending": max(0, int(pending)) if sealed else None,
            "finished": None if finished is None else float(finished),
            "checked": int(checked),
            "found": int(found),
            "failed": int(failed),
        }

    def news(self, batch: str) -> list[Update]:
        """The new chapters ``batch`` found, of every series (for the host-wide targets)."""
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT {_UPDATE}, 1 FROM series_chapters c JOIN followed_series s "
                "ON s.source = c.source AND s.manga = c.manga "
                f"WHERE c.batch = ? AND c.kind <> '{KNOWN}' ORDER BY {_NEWEST}",
                (batch,),
            )
            return [_update(row) for row in cursor.fetchall()]

    def readers_with_news(self, batch: str) -> dict[str, list[Update]]:
        """Each reader's new chapters from ``batch`` (found after they followed the series)."""
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT f.reader, {_UPDATE}, 1 FROM follows f JOIN series_chapters c "
                "ON c.source = f.source AND c.manga = f.manga JOIN followed_series s "
                "ON s.source = c.source AND s.manga = c.manga "
                f"WHERE c.batch = ? AND c.kind <> '{KNOWN}' AND c.found > f.since "
                f"ORDER BY f.reader, {_NEWEST}",
                (batch,),
            )
            rows = cursor.fetchall()
        news: dict[str, list[Update]] = {}
        for row in rows:
            news.setdefault(row[0], []).append(_update(row[1:]))
        return news

    # -- what readers see ------------------------------------------------------------------

    def updates(
        self, reader: str, limit: int, offset: int = 0, *, unread_only: bool = False
    ) -> list[Update]:
        unread = "AND NOT EXISTS (SELECT 1 FROM progress p WHERE " + _READ + ")"
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT {_UPDATE}, NOT EXISTS (SELECT 1 FROM progress p WHERE {_READ}) "
                "FROM follows f JOIN series_chapters c ON c.source = f.source "
                "AND c.manga = f.manga JOIN followed_series s ON s.source = c.source "
                f"AND s.manga = c.manga WHERE f.reader = ? AND c.kind <> '{KNOWN}' "
                f"AND c.found > f.since {unread if unread_only else ''} "
                f"ORDER BY {_NEWEST} LIMIT ? OFFSET ?",
                (reader, limit, offset),
            )
            return [_update(row) for row in cursor.fetchall()]

    def unread_counts(self, reader: str) -> dict[tuple[str, str], int]:
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT c.source, c.manga, count(*) FROM follows f JOIN series_chapters c "
                f"ON c.source = f.source AND c.manga = f.manga WHERE f.reader = ? "
                f"AND c.kind <> '{KNOWN}' AND c.found > f.since AND NOT EXISTS "
                f"(SELECT 1 FROM progress p WHERE {_READ}) GROUP BY c.source, c.manga",
                (reader,),
            )
            return {(row[0], row[1]): int(row[2]) for row in cursor.fetchall()}

    def last_found(self, reader: str) -> dict[tuple[str, str], float]:
        """When a check last found a chapter new to the reader, by series (those with one)."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT c.source, c.manga, max(c.found) FROM follows f JOIN series_chapters c "
                f"ON c.source = f.source AND c.manga = f.manga WHERE f.reader = ? "
                f"AND c.kind <> '{KNOWN}' AND c.found > f.since GROUP BY c.source, c.manga",
                (reader,),
            )
            return {(row[0], row[1]): float(row[2]) for row in cursor.fetchall()}

    def chapter(self, source: str, manga: str, chapter: str) -> tuple[int | None] | None:
        """The page count a check saw of a chapter it recorded (None unknown); None: no such."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT pages FROM series_chapters WHERE source = ? AND manga = ? AND chapter = ?",
                (source, manga, chapter),
            )
            row = cursor.fetchone()
        return None if row is None else (None if row[0] is None else int(row[0]),)


#: A progress row that says reader ``f.reader`` finished chapter ``c``.
_READ = (
    "p.reader = f.reader AND p.source = c.source AND p.manga = c.manga "
    "AND p.chapter = c.chapter AND p.finished = 1"
)
_UPDATE = (
    "c.source, c.manga, c.chapter, c.title, c.number, c.language, c.scanlator, c.date, "
    "c.pages, c.found, c.kind, c.removed, s.title, s.state"
)
_NEWEST = "c.found DESC, c.date DESC, c.number DESC, c.chapter"


def _update(row: Sequence[Any]) -> Update:
    source, manga, chapter, title, number, language, scanlator, date, pages = row[:9]
    found, kind, removed, series_title, series_state, unread = row[9:15]
    return Update(
        source,
        manga,
        chapter,
        title,
        float(number),
        language,
        scanlator,
        float(date),
        None if pages is None else int(pages),
        float(found),
        kind,
        None if removed is None else float(removed),
        series_title,
        series_state,
        bool(unread),
    )


def _record(cursor: Any, result: Result, now: float) -> Recorded | None:
    """:meth:`FoundStore.record` in the caller's transaction."""
    cursor.execute(
        "SELECT state FROM followed_series WHERE source = ? AND manga = ? AND lease = ?",
        (result.source, result.manga, result.token),
    )
    row = cursor.fetchone()
    if row is None:
        return None
    first = row[0] == "new"
    state = result.state
    added: list[Seen] = []
    removed = 0
    read = state == "ok" and result.read
    if read:
        added, removed = _compare(cursor, result, first, now)
    elif state == "failing" and first:
        state = "new"  # what exists is still to be recorded by a first check that works
    cursor.execute(
        "UPDATE followed_series SET lease = NULL, lease_until = NULL, state = ?, "
        "next_check = ?, last_check = ?, error = ?, "
        "failures = CASE WHEN ? THEN failures + 1 ELSE 0 END, "
        "last_change = CASE WHEN ? THEN ? ELSE last_change END, "
        "mark = CASE WHEN ? THEN ? ELSE mark END, "
        "full_check = CASE WHEN ? THEN ? ELSE full_check END "
        "WHERE source = ? AND manga = ?",
        (
            state,
            result.next_check,
            now,
            result.error,
            result.state == "failing",
            bool(added or removed) or first,
            now,
            read,
            result.mark,
            read,
            now,
            result.source,
            result.manga,
        ),
    )
    finished = False
    if result.batch is not None:
        finished = _count(cursor, result.batch, len(added), result.state == "failing")
    return Recorded(len(added), removed, finished, tuple(added))


def _compare(cursor: Any, result: Result, first: bool, now: float) -> tuple[list[Seen], int]:
    """Record what ``result`` saw against what was known; (new chapters, how many removed)."""
    cursor.execute(
        "SELECT chapter, number, removed FROM series_chapters WHERE source = ? AND manga = ?",
        (result.source, result.manga),
    )
    known = {row[0]: (float(row[1]), row[2]) for row in cursor.fetchall()}
    numbers = {number for number, _ in known.values()}
    seen = set()
    added = []
    for chapter in result.chapters:
        if chapter.slug in seen:
            continue
        seen.add(chapter.slug)
        was = known.get(chapter.slug)
        if was is not None:
            if was[1] is not None:  # listed again after it was removed
                cursor.execute(
                    "UPDATE series_chapters SET removed = NULL "
                    "WHERE source = ? AND manga = ? AND chapter = ?",
                    (result.source, result.manga, chapter.slug),
                )
            continue
        kind = KNOWN if first else VERSION if chapter.number in numbers else CHAPTER
        if kind != KNOWN:
            added.append(chapter)
        cursor.execute(
            "INSERT INTO series_chapters(source, manga, chapter, title, number, language, "
            "scanlator, date, pages, found, kind, batch) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                result.source,
                result.manga,
                chapter.slug,
                chapter.title,
                chapter.number,
                chapter.language,
                chapter.scanlator,
                chapter.date,
                chapter.pages,
                now,
                kind,
                result.batch,
            ),
        )
    removed = 0
    if result.complete:
        for slug, (_, was_removed) in known.items():
            if slug not in seen and was_removed is None:
                cursor.execute(
                    "UPDATE series_chapters SET removed = ? "
                    "WHERE source = ? AND manga = ? AND chapter = ?",
                    (now, result.source, result.manga, slug),
                )
                removed += 1
    return added, removed


def _count(
    cursor: Any, batch: str, found: int, failed: bool, checked: int = 1, checks: int = 1
) -> bool:
    """``checks`` checks of ``batch`` done (``checked`` of them asked the source)."""
    cursor.execute(
        "UPDATE check_batches SET pending = pending - ?, checked = checked + ?, "
        "found = found + ?, failed = failed + ? WHERE id = ?",
        (checks, checked, found, int(failed), batch),
    )
    return _finish(cursor, batch)


def _finish(cursor: Any, batch: str) -> bool:
    """Mark ``batch`` finished if every check queued for it is done; whether this did."""
    cursor.execute(
        "UPDATE check_batches SET finished = ? WHERE id = ? AND sealed = 1 AND pending <= 0 "
        "AND finished IS NULL",
        (time.time(), batch),
    )
    return bool(cursor.rowcount > 0)
