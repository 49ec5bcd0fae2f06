"""Applying one walk's findings to the SQLite index.

Only chapters whose signature changed since the last scan are read, and only
series that gained, lost or changed a chapter (or whose series.json or cover
changed) are rebuilt, so rescanning an unchanged library costs one walk and a
few queries. A file that was skipped keeps its signature in ``problems``, so
a broken file is not reopened on every scan either.

A scan limited to some top-level names (``only``) must not touch anything
outside them: every "what is stored" lookup below is filtered to that scope,
or the rest of the library would look deleted.
"""

import functools
import hashlib
import itertools
import json
import marshal
import sqlite3
import time
from collections.abc import Callable, Generator, Iterator
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

from toshokan.sources.local.discovery import FoundChapter, FoundSeries, signature_mtime
from toshokan.sources.local.index.database import (
    analyzed,
    build_chapter_lookups,
    drop_chapter_lookups,
    now,
    refresh_statistics,
)
from toshokan.sources.local.index.series_rows import (
    SeriesJsonReader,
    aggregate_series,
    delete_series,
    insert_series,
    refresh_tag_names,
)
from toshokan.sources.local.index.slug_rows import (
    IndexClaims,
    LibraryClaims,
    assign_series_slugs,
    new_chapter_slugs,
)
from toshokan.sources.local.reading import PlainReading
from toshokan.sources.local.scan_report import ScanReport

#: Commit after this many chapters (and at least FLUSH_SECONDS apart), between two
#: series, so readers see the series read so far while a long first scan runs.
BATCH = 500
FLUSH_SECONDS = 1.0
#: The first commit comes as soon as this many chapters are read, so that a new library
#: shows its first series before start-up's wait (``start_wait``) is over.
FIRST_BATCH = 100


#: Series rebuilt between two calls of ``keep_reading`` (about 10 ms of work).
KEEP_READING_EVERY = 40


class ScanCancelled(Exception):
    """The scan was stopped (the host is stopping, Ctrl-C); every chapter read so far is
    committed, what vanished or changed is left for the next scan."""


#: Top-level names whose chapters a scan looks up by name; past this, all in one query.
RANGE_QUERIES = 200

#: Where ``listings`` keeps the whole library's listing (:func:`library_listing_of`): under
#: the empty name, which no series has, so whatever empties the table forgets it too.
LIBRARY = ""

#: Called with (chapters read so far, chapters to read in this scan).
Progress = Callable[[int, int], None]
#: Reads the chapters given, yielding their readings (their fields) in the same order.
ChaptersReader = Callable[[list[FoundChapter]], Generator[PlainReading, None, None]]


class StoredChapter(NamedTuple):
    """The stored row of a chapter that changed or vanished (looked up one by one)."""

    id: int
    series_id: int
    first_seen: float


def in_scope(relpath: str, only: set[str] | None) -> bool:
    """Whether ``relpath`` lies under one of the top-level names being scanned."""
    return only is None or relpath.split("/", 1)[0] in only


class IndexUpdate:
    """One scan's changes to the index, made inside the caller's writer connection."""

    def __init__(
        self,
        db: sqlite3.Connection,
        found: dict[str, FoundSeries],
        walk_problems: dict[str, str],
        only: set[str] | None,
        *,
        read_chapters: ChaptersReader,
        keep_reading: Callable[[], None] = lambda: None,
        read_series_json: SeriesJsonReader,
        progress: Progress | None = None,
        cancelled: Callable[[], bool] = lambda: False,
        claims: LibraryClaims | None = None,
    ):
        self.db = db
        #: Where slugs are claimed: the index's own table unless the host shares claims.
        self.claims = claims or IndexClaims(db)
        self.found = found
        self.walk_problems = walk_problems
        self.only = only
        self.read_chapters = read_chapters
        #: Called now and then during a long stretch of writing: the reading goes on meanwhile.
        self.keep_reading = keep_reading
        #: The readings of the chapters to read, in the order the series are applied.
        self.readings: Iterator[PlainReading] = iter(())
        self.read_series_json = read_series_json
        self.progress = progress
        self.cancelled = cancelled
        self.report = ScanReport()
        #: Series ids whose row must be rebuilt from their chapters.
        self.changed_series: set[int] = set()
        #: Series ids already rebuilt and committed while the scan went on.
        self.published: set[int] = set()
        #: A series row was added or deleted, so series slugs must be reassigned.
        self.series_set_changed = False
        #: Chapter rows of the series being applied, written when it is done.
        self.unwritten: list[dict[str, Any]] = []
        #: A first scan's chapter rows as written, by series id, until the series is rebuilt.
        self.written: dict[int, list[dict[str, Any]]] = {}
        #: Paths among them that the index did not hold: their first-seen time is claimed.
        self.new: set[str] = set()
        #: Chapters to read in this scan, read so far, and read since the last commit.
        self.total = 0
        self.done = 0
        self.pending = 0
        #: relpath -> (id, meta_sig) of each series row the index holds (in scope).
        self.stored_series: dict[str, tuple[int, str]] = {}
        #: relpath -> signature of stored chapters not yet seen in this walk; what is
        #: left at the end vanished.
        self.unseen_sigs: dict[str, str] = {}
        #: Top-level name -> :func:`listing_of` its series, as the index holds it and as found.
        self.stored_listings: dict[str, str] = {}
        self.found_listings: dict[str, str] = {}
        #: Top-level names whose chapters are compared one by one (the rest are unchanged).
        self.changed_listings: set[str] = set()
        #: The whole library's listing as found by a full scan, and as the index holds it.
        self.library_listing: str | None = None
        self.stored_library: str | None = None
        #: relpath -> signature of chapters skipped last time, not worth reopening unchanged.
        self.skipped_sigs: dict[str, str] = {}
        #: Paths with a problem recorded by a chapter read (skipped or warned about).
        self.problem_paths: set[str] = set()
        self.series_ids: dict[str, int] = {}
        #: The time this scan started: every chapter it adds first entered the library then.
        self.scan_time = now()
        self.flushed_at = time.monotonic()
        #: Commits made while the scan goes on.
        self.publishes = 0
        #: The index held no chapter: their lookups are built at the end, not row by row.
        self.first_fill = False

    def run(self) -> ScanReport:
        ordered = sorted(self.found.values(), key=_by_relpath)
        self._load_stored_state(ordered)
        # One pass over every chapter of the series whose listing changed: what it leaves
        # in unseen_sigs vanished, and only chapters that changed go further (an unchanged
        # rescan has none to look at).
        to_read: list[tuple[FoundSeries, FoundChapter, bool]] = []
        unseen, skipped = self.unseen_sigs.pop, self.skipped_sigs.get
        for series in ordered:
            if series.relpath not in self.changed_listings:
                continue
            for chapter in series.chapters:
                stored_sig = unseen(chapter.relpath, None)
                # Unchanged, or skipped last time and still the same file: not read again.
                if stored_sig != chapter.sig and skipped(chapter.relpath) != chapter.sig:
                    to_read.append((series, chapter, stored_sig is not None))
        self.total = len(to_read)
        if self.progress:
            self.progress(0, self.total)
        readings = self.read_chapters([chapter for _, chapter, _ in to_read])
        self.readings = readings
        self.db.execute("BEGIN")
        # A first scan builds the chapters' lookups once, at its end.
        self.first_fill = self.db.execute("SELECT 1 FROM chapters LIMIT 1").fetchone() is None
        if self.first_fill:
            drop_chapter_lookups(self.db)
        self._forget_changed_listings()
        self._record_walk_problems()
        self._note_changed_series_metadata(ordered)
        try:
            for relpath, group in itertools.groupby(to_read, key=lambda item: item[0].relpath):
                try:
                    for series, chapter, stored in group:
                        self._apply_chapter(series, chapter, stored)
                finally:
                    # Also when cancelled (Ctrl-C, shutdown): every chapter read is kept, so
                    # the next scan goes on from there instead of reading them again.
                    self._write_chapters(relpath)
                if self._time_to_publish():
                    self._publish_finished_series()
        except ScanCancelled:
            self._build_chapter_lookups()
            self._publish_finished_series()
            raise
        finally:
            readings.close()  # a cancelled scan stops the reading early
        self._remove_vanished_chapters()
        self._forget_problems_of_vanished_files()
        self._remove_vanished_series()
        self._rebuild_changed_series()
        self._build_chapter_lookups()
        self._refresh_library_rows()
        self._record_listings()
        self.db.execute("COMMIT")
        self._fill_report()
        return self.report

    # -- before: what the index holds now ----------------------------------------

    def _load_stored_state(self, ordered: list[FoundSeries]) -> None:
        db = self.db
        self.found_listings = {series.relpath: listing_of(series) for series in ordered}
        if self.only is None:
            self.library_listing = library_listing_of(ordered, self.found_listings)
            row = (
                _plain(db)
                .execute("SELECT listing FROM listings WHERE relpath = ?", (LIBRARY,))
                .fetchone()
            )
            self.stored_library = None if row is None else row[0]
            if self.library_listing == self.stored_library:
                # Every series found as the last full scan left the index: no series'
                # rows, listing or metadata to look at (5,000 of each, a tenth of the
                # walk's time over the floor's).
                return
        rows = _plain(db).execute("SELECT relpath, id, meta_sig FROM series")
        only = self.only
        self.stored_series = {
            relpath: (sid, meta)
            for relpath, sid, meta in rows
            if only is None or in_scope(relpath, only)
        }
        self._compare_listings(ordered)
        # Only the chapters under the top-level names whose listing changed (or that are
        # gone) are compared one by one: their (relpath, signature) pairs, read off a
        # covering index.
        changed = self.changed_listings
        chapters = _plain(db)
        if not changed:
            self.unseen_sigs = {}
        elif len(changed) <= RANGE_QUERIES:
            for name in sorted(changed):
                chapters.execute(
                    "SELECT relpath, sig FROM chapters WHERE relpath = ? "
                    "OR (relpath >= ? AND relpath < ?)",
                    (name, f"{name}/", f"{name}0"),  # "0" follows "/": all of name/...
                )
                self.unseen_sigs.update(chapters)
        else:
            chapters.execute("SELECT relpath, sig FROM chapters")
            self.unseen_sigs = {r: sig for r, sig in chapters if _top(r) in changed}
        self.skipped_sigs = {
            row["relpath"]: row["sig"]
            for row in db.execute("SELECT relpath, sig FROM problems WHERE severity = 'skipped'")
            if in_scope(row["relpath"], self.only)
        }
        self.series_ids = {relpath: sid for relpath, (sid, _) in self.stored_series.items()}
        self.problem_paths = set(_chapter_problem_paths(db))

    def _compare_listings(self, ordered: list[FoundSeries]) -> None:
        """Which top-level names' chapters must be compared one by one: a series found with
        another listing than when it was last applied (or never applied), and a name the
        index knows that is gone."""
        rows = _plain(self.db).execute("SELECT relpath, listing FROM listings")
        only = self.only
        self.stored_listings = (
            dict(rows)
            if only is None
            else {name: listing for name, listing in rows if name in only}
        )
        stored = self.stored_listings.get
        self.changed_listings = {
            name for name, listing in self.found_listings.items() if stored(name) != listing
        }
        self.changed_listings.update(
            name for name in self.stored_series if name not in self.found_listings
        )

    def _forget_changed_listings(self) -> None:
        """Drop the listings of the series this scan changes, and the library's, in its first
        transaction: a scan stopped after a commit leaves their rows changed and the listings
        of the last finished scan would call them unchanged were the files put back so."""
        if self.changed_listings:
            self.db.executemany(
                "DELETE FROM listings WHERE relpath = ?",
                [(name,) for name in (*self.changed_listings, LIBRARY)],
            )

    def _record_listings(self) -> None:
        """The listing of every series this scan applied, for the next scan to compare; a
        name no longer found forgets its own. Written with the scan's last commit only, so
        a cancelled scan leaves the next one to compare what it did not finish."""
        found = self.found_listings
        self.db.executemany(
            "INSERT OR REPLACE INTO listings VALUES(?, ?)",
            [(name, found[name]) for name in self.changed_listings if name in found],
        )
        self.db.executemany(
            "DELETE FROM listings WHERE relpath = ?",
            [(name,) for name in self.stored_listings if name not in found and name != LIBRARY],
        )
        # The library's own: a scan of some names leaves the rest unlooked at.
        if self.only is not None:
            self.db.execute("DELETE FROM listings WHERE relpath = ?", (LIBRARY,))
        elif self.changed_listings or self.library_listing != self.stored_library:
            self.db.execute(
                "INSERT OR REPLACE INTO listings VALUES(?, ?)", (LIBRARY, self.library_listing)
            )

    def _stored(self, relpath: str) -> StoredChapter | None:
        row = self.db.execute(
            "SELECT id, series_id, first_seen FROM chapters WHERE relpath = ?", (relpath,)
        ).fetchone()
        return None if row is None else StoredChapter(*row)

    def _record_walk_problems(self) -> None:
        """Files found unusable while walking are recorded afresh each scan."""
        for relpath in [r for r in _walk_problem_paths(self.db) if in_scope(r, self.only)]:
            self.db.execute(
                "DELETE FROM problems WHERE relpath = ? AND severity = 'walk'", (relpath,)
            )
        for relpath, why in self.walk_problems.items():
            self.db.execute(
                "INSERT OR REPLACE INTO problems(relpath, severity, sig, reason) VALUES(?, 'walk', '', ?)",
                (relpath, why),
            )

    # -- during: each series and chapter found -----------------------------------

    def _note_changed_series_metadata(self, ordered: list[FoundSeries]) -> None:
        """Series whose series.json or cover changed are rebuilt even if no chapter did."""
        for series in ordered:
            stored = self.stored_series.get(series.relpath)
            if stored is not None and stored[1] != series.meta_sig:
                self.changed_series.add(stored[0])

    def _apply_chapter(self, series: FoundSeries, chapter: FoundChapter, was_stored: bool) -> None:
        """Read a new or changed chapter and store it (or why it was skipped)."""
        sid = self.series_ids.get(series.relpath)
        stored = self._stored(chapter.relpath) if was_stored else None
        if stored is not None and stored.series_id != sid:
            # Stored under a different series row: drop it and add it afresh.
            self.db.execute("DELETE FROM chapters WHERE id = ?", (stored.id,))
            self.changed_series.add(stored.series_id)
            stored = None
        record, reason, warnings = next(self.readings)
        self.done += 1
        self.pending += 1
        if self.progress:
            self.progress(self.done, self.total)
        self._replace_chapter_problems(chapter, warnings)
        if record is None:
            self._skip_chapter(chapter, stored, reason)
        else:
            sid = self._store_chapter(series, record, stored)
        if sid is not None:
            self.changed_series.add(sid)
        if self.cancelled():
            raise ScanCancelled()

    def _write_chapters(self, series_relpath: str) -> None:
        """Write one series' chapter rows at once (the same statement for each), the new
        ones dated by when the library first had them (another replica may have seen them
        first: one claim for the series)."""
        new = {r["relpath"]: r["first_seen"] for r in self.unwritten if r["relpath"] in self.new}
        if new:
            first = self.claims.first_seen(series_relpath, new)
            if first != new:  # another replica saw some first (never, without one)
                for record in self.unwritten:
                    if record["relpath"] in first:
                        record["first_seen"] = first[record["relpath"]]
                        record["date"] = _date_of(record)
            self.new.clear()
        if self.unwritten and self.first_fill:
            # Every row of the series is here: its slugs go in with the rows.
            slugs = new_chapter_slugs(self.claims, series_relpath, self.unwritten)
            for record in self.unwritten:
                record["slug"] = slugs[record["relpath"]]
        if self.unwritten:
            columns = tuple(self.unwritten[0])
            self.db.executemany(_upsert_sql(columns), map(itemgetter(*columns), self.unwritten))
            if self.first_fill:  # every row of the series: rebuilt from these, not read back
                self.written[self.unwritten[0]["series_id"]] = self.unwritten
            self.unwritten = []

    def _publish_finished_series(self) -> None:
        """Commit, with the series applied so far complete (rows, slugs), so they answer."""
        self._rebuild_changed_series()
        self.published |= self.changed_series
        self.changed_series.clear()
        if self.series_set_changed:
            assign_series_slugs(self.db, self.claims)
        self.db.execute("COMMIT")
        self.db.execute("BEGIN")
        self.pending = 0
        self.flushed_at = time.monotonic()
        self.publishes += 1

    def _build_chapter_lookups(self) -> None:
        if self.first_fill:
            build_chapter_lookups(self.db)
            self.first_fill = False

    def _time_to_publish(self) -> bool:
        if not self.publishes:
            return self.pending >= min(FIRST_BATCH, BATCH)
        return self.pending >= BATCH and time.monotonic() - self.flushed_at >= FLUSH_SECONDS

    def _replace_chapter_problems(self, chapter: FoundChapter, warnings: list[str]) -> None:
        if chapter.relpath in self.problem_paths:  # a first scan has none to forget
            self.db.execute(
                "DELETE FROM problems WHERE relpath = ? AND severity != 'walk'",
                (chapter.relpath,),
            )
        for warning in warnings:
            self.db.execute(
                "INSERT OR REPLACE INTO problems VALUES(?, 'warning', ?, ?)",
                (chapter.relpath, chapter.sig, warning),
            )

    def _skip_chapter(
        self, chapter: FoundChapter, stored: StoredChapter | None, reason: str | None
    ) -> None:
        """Record why the chapter is unusable (with its signature) and drop any old row."""
        self.db.execute(
            "INSERT OR REPLACE INTO problems VALUES(?, 'skipped', ?, ?)",
            (chapter.relpath, chapter.sig, reason or "skipped"),
        )
        if stored is not None:
            self.db.execute("DELETE FROM chapters WHERE id = ?", (stored.id,))
            self.report.removed += 1

    def _store_chapter(
        self, series: FoundSeries, record: dict[str, Any], stored: StoredChapter | None
    ) -> int:
        """Insert or update the chapter row; returns its series id."""
        sid = self.series_ids.get(series.relpath)
        if sid is None:
            # A series row exists only once one of its chapters is usable.
            sid = insert_series(self.db, series)
            self.series_ids[series.relpath] = sid
            self.series_set_changed = True
        record["series_id"] = sid
        # Recorded once: a chapter keeps the time it first entered the library, so a
        # library copied in bulk lists by number, and a chapter added later on top.
        record["first_seen"] = self.scan_time if stored is None else stored.first_seen
        record["date"] = _date_of(record)
        self.unwritten.append(record)
        if stored is None:
            self.new.add(record["relpath"])
            self.report.added += 1
        else:
            self.report.updated += 1
        return sid

    # -- after: what vanished, and the rows derived from chapters ----------------

    def _remove_vanished_chapters(self) -> None:
        for relpath in self.unseen_sigs:
            stored = self._stored(relpath)
            if stored is None:
                continue
            self.db.execute("DELETE FROM chapters WHERE id = ?", (stored.id,))
            self.changed_series.add(stored.series_id)
            self.report.removed += 1

    def _forget_problems_of_vanished_files(self) -> None:
        for relpath in [r for r in _chapter_problem_paths(self.db) if in_scope(r, self.only)]:
            if not _still_found(self.found, relpath):
                self.db.execute(
                    "DELETE FROM problems WHERE relpath = ? AND severity != 'walk'", (relpath,)
                )

    def _remove_vanished_series(self) -> None:
        for relpath, (sid, _) in self.stored_series.items():
            if relpath not in self.found:  # keyed by relpath
                delete_series(self.db, sid)
                self.changed_series.discard(sid)
                self.series_set_changed = True

    def _rebuild_changed_series(self) -> None:
        if not self.changed_series:
            return
        by_id = {
            self.series_ids[s.relpath]: s
            for s in self.found.values()
            if s.relpath in self.series_ids
        }
        for n, sid in enumerate(sorted(self.changed_series)):
            if n % KEEP_READING_EVERY == 0:
                self.keep_reading()
            series = by_id.get(sid)
            if series is None:
                continue
            if not aggregate_series(
                self.db,
                sid,
                series,
                self.read_series_json,
                self.claims,
                written=self.written.pop(sid, None) if self.first_fill else None,
            ):
                self.series_set_changed = True

    def _refresh_library_rows(self) -> None:
        """Series slugs, the tag list and the planner's statistics when anything changed, and
        the content's time."""
        if self.series_set_changed:
            assign_series_slugs(self.db, self.claims)
        rebuilt = self.changed_series or self.published
        if rebuilt or self.series_set_changed:
            refresh_tag_names(self.db)
        changed = rebuilt or self.series_set_changed or self.report.changed
        known = self.db.execute("SELECT 1 FROM meta WHERE key = 'updated_at'").fetchone()
        if changed or known is None:  # an unchanged library's time is the one stored
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES('updated_at', ?)",
                (str(content_time(self.db)),),
            )
        if changed or not analyzed(self.db):
            refresh_statistics(self.db)

    def _fill_report(self) -> None:
        """Totals and problems for the whole library, not just this scan's scope."""
        report = self.report
        counts = self.db.execute(
            "SELECT (SELECT count(*) FROM series), (SELECT count(*) FROM chapters)"
        ).fetchone()
        report.series, report.chapters = counts[0], counts[1]
        report.read = self.done
        for row in self.db.execute(
            "SELECT relpath, severity, reason FROM problems ORDER BY relpath, reason"
        ):
            target = report.warnings if row["severity"] == "warning" else report.skipped
            target.append((row["relpath"], row["reason"]))


_NO_OTHERS = marshal.dumps([], 2)


def listing_of(series: FoundSeries) -> str:
    """A digest of a series' chapters as found: paths and signatures, in the walk's order.

    Stored for each series a scan applied (table ``listings``): at the end of that scan the
    index held each of these chapters at that signature (read, or skipped as unusable), so
    an equal listing later means none of them changed, came or went, and the series needs
    no look at its rows. Anything else that changes chapters' signatures (a migration,
    new page types) empties the table.

    Digested from the walk's raw values in a few calls a folder, not as text a chapter at a
    time: a folder's path, its archives' names and their times' and sizes' array as bytes
    (see :data:`~discovery.Archives`), after the few other chapters' paths, kinds and
    signatures (``marshal``'s version 2: equal values, equal bytes).
    """
    others = (
        marshal.dumps([(c.relpath, c.kind, c.sig) for c in series.others], 2)
        if series.others
        else _NO_OTHERS
    )
    digest = hashlib.sha1(others)
    update = digest.update
    for rel, names, numbers in series.archives:
        update(f"{rel}\0{names}\0".encode("utf-8", "surrogatepass"))
        update(numbers)
    return digest.hexdigest()


def library_listing_of(ordered: list[FoundSeries], listings: dict[str, str]) -> str:
    """A digest of every series found, in order: its name, :func:`listing_of` it, and its
    series.json's and cover's signatures (:attr:`~discovery.FoundSeries.meta_sig`).

    Stored by a full scan that finished (under :data:`LIBRARY`), so an equal one later
    means nothing changed, came or went since, and the index's series need no look at all.
    Names (never empty, never holding a NUL) end at two NULs; then a listing of 40
    characters each; then the signatures, JSON (no NUL), between NULs.
    """
    digest = hashlib.sha1("\0".join(listings).encode("utf-8", "surrogatepass"))
    digest.update(b"\0\0")
    digest.update("".join(listings.values()).encode())
    digest.update("\0".join([series.meta_sig for series in ordered]).encode())
    return digest.hexdigest()


_by_relpath = attrgetter("relpath")


def _plain(db: sqlite3.Connection) -> sqlite3.Cursor:
    """A cursor whose rows are plain tuples: the index's thousands of series (and their
    listings) are read by every rescan, and a :class:`sqlite3.Row` for each costs more."""
    cursor = db.cursor()
    cursor.row_factory = None
    return cursor


def _top(relpath: str) -> str:
    """The top-level name (series) a path lies under."""
    return relpath.split("/", 1)[0]


def _date_of(record: dict[str, Any]) -> float:
    """A chapter's date: its release date, else when it first entered the library."""
    released: float | None = record["released"]
    return released if released is not None else float(record["first_seen"])


def content_time(db: sqlite3.Connection) -> float:
    """When the library's content last changed, as its files say: the newest modification
    time of a chapter, series.json or cover the index holds.

    The source's ``updatedAt``, so it is the same on every replica reading one folder
    and after every restart (a scan's own time would give each replica its own hash).
    """
    newest = float(db.execute("SELECT coalesce(max(mtime), 0) FROM chapters").fetchone()[0])
    for (meta_sig,) in db.execute("SELECT meta_sig FROM series WHERE meta_sig != ''"):
        for found in json.loads(meta_sig):
            if found is not None:
                newest = max(newest, signature_mtime(found[1]))
    return newest


@functools.lru_cache(maxsize=4)
def _upsert_sql(columns: tuple[str, ...]) -> str:
    """The statement for a record with these keys (every record has the same ones), its
    values given in this order: bound by position, not by name from each record (SQLite's
    module makes a string of each name to look it up, 20 a row: 1.5 us a chapter)."""
    placeholders = ", ".join("?" for _ in columns)
    updates = ", ".join(f"{c}=excluded.{c}" for c in columns if c != "relpath")
    return (
        f"INSERT INTO chapters({', '.join(columns)}) VALUES({placeholders}) "
        f"ON CONFLICT(relpath) DO UPDATE SET {updates}"
    )


def _walk_problem_paths(db: sqlite3.Connection) -> list[str]:
    return [row[0] for row in db.execute("SELECT relpath FROM problems WHERE severity = 'walk'")]


def _chapter_problem_paths(db: sqlite3.Connection) -> list[str]:
    return [
        row[0]
        for row in db.execute("SELECT DISTINCT relpath FROM problems WHERE severity != 'walk'")
    ]


def _still_found(found: dict[str, FoundSeries], relpath: str) -> bool:
    """Whether a problem's path is still a chapter or series.json found by this walk."""
    top = relpath.split("/", 1)[0]
    series = found.get(top)
    if series is None:
        return False
    if series.series_json and series.series_json[0] == relpath:
        return True
    return any(c.relpath == relpath for c in series.chapters)
