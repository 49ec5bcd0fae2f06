"""The SQLite index: what the scanner learned, in a form search and details read fast.

One file (WAL mode, so readers never wait for the scanner), plain stdlib
``sqlite3``, an FTS5 table over titles, alternative titles and people. The
scanner is the only writer and holds :attr:`Index.write_lock`; readers use one
connection per thread (:meth:`Index.reader`), because a sqlite3 connection
must not be used from two threads at once and the host calls us from a pool.
"""

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toshokan.sdk import ChapterFile
from toshokan.sdk.names import IMAGE_TYPES

SCHEMA_VERSION = "9"
#: The full-text table. Its prefix indexes hold every term's first two and three letters,
#: so a short prefix (``tab*``) reads one list instead of merging every term it begins.
_FULL_TEXT = (
    "fts5(title, alt_titles, people, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3')"
)
#: Older versions brought up to this one in place, keeping slugs and dates: version ->
#: statements, run in one transaction. Clearing the signatures has the next scan read
#: every chapter again.
_READING_DIRECTION = (
    "ALTER TABLE series ADD COLUMN reading_direction TEXT",
    # The chapters' ComicInfo is read again for its <Manga>, which the index did not keep.
    "UPDATE chapters SET sig = ''",
)
#: An FTS5 table's options are fixed when it is made: a new one, filled from the old.
_PREFIX_INDEXES = (
    f"CREATE VIRTUAL TABLE series_fts_prefixed USING {_FULL_TEXT}",
    "INSERT INTO series_fts_prefixed(rowid, title, alt_titles, people) "
    "SELECT rowid, title, alt_titles, people FROM series_fts",
    "DROP TABLE series_fts",
    "ALTER TABLE series_fts_prefixed RENAME TO series_fts",
)
MIGRATIONS = {
    "6": (
        "ALTER TABLE chapters ADD COLUMN partial_md5 TEXT",
        *_READING_DIRECTION,
        *_PREFIX_INDEXES,
    ),
    "7": (*_READING_DIRECTION, *_PREFIX_INDEXES),
    "8": _PREFIX_INDEXES,
}

#: The indexes of ``chapters`` that no step of a scan reads until its end. A first scan
#: (an empty table) builds them once at its end (:func:`drop_chapter_lookups`): kept up to
#: date row by row they cost a fifth of writing a chapter.
CHAPTER_LOOKUPS = """
CREATE INDEX IF NOT EXISTS chapters_partial_md5 ON chapters(partial_md5)
    WHERE partial_md5 IS NOT NULL;
-- Files indexed before KOReader ids were kept: the scan names them (Scanner.name_files).
CREATE INDEX IF NOT EXISTS chapters_unnamed ON chapters(relpath)
    WHERE partial_md5 IS NULL AND kind != 'dir';
-- The library's content time (update.content_time) is the newest chapter's: read off here.
CREATE INDEX IF NOT EXISTS chapters_mtime ON chapters(mtime);
-- What a rescan compares against the walk, read off this index alone: the table's
-- rows carry page lists and metadata, ten times the bytes.
CREATE INDEX IF NOT EXISTS chapters_state ON chapters(relpath, sig);
"""
_CHAPTER_LOOKUP_NAMES = (
    "chapters_partial_md5",
    "chapters_unnamed",
    "chapters_mtime",
    "chapters_state",
)

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS series(
    id INTEGER PRIMARY KEY,
    relpath TEXT NOT NULL UNIQUE,
    base_slug TEXT NOT NULL,
    slug TEXT UNIQUE,
    title TEXT NOT NULL,
    sort_title TEXT NOT NULL,
    alt_titles TEXT NOT NULL DEFAULT '[]',
    synopsis TEXT,
    url TEXT,
    writers TEXT NOT NULL DEFAULT '[]',
    artists TEXT NOT NULL DEFAULT '[]',
    publisher TEXT,
    year INTEGER,
    status TEXT NOT NULL DEFAULT 'Unknown',
    classification TEXT NOT NULL DEFAULT 'Unknown',
    original_language TEXT,
    genres TEXT NOT NULL DEFAULT '[]',
    tags TEXT NOT NULL DEFAULT '[]',
    cover_relpath TEXT,
    cover_kind TEXT,
    cover_member TEXT,
    cover_version TEXT,
    created_at REAL NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL DEFAULT 0,
    latest_at REAL NOT NULL DEFAULT 0,
    chapter_count INTEGER NOT NULL DEFAULT 0,
    meta_sig TEXT NOT NULL DEFAULT '',
    series_json TEXT,
    -- How the work reads (ltr, rtl, vertical) when its metadata says; the Manga's field.
    reading_direction TEXT
);
-- One index per sort, in the search's exact ORDER BY, limited to the series that are
-- listed: a page is read off the index, never sorted per request (search.build).
CREATE INDEX IF NOT EXISTS series_sort_title ON series(sort_title, slug) WHERE slug IS NOT NULL;
CREATE INDEX IF NOT EXISTS series_latest ON series(latest_at, slug) WHERE slug IS NOT NULL;
CREATE INDEX IF NOT EXISTS series_updated ON series(updated_at, slug) WHERE slug IS NOT NULL;
CREATE INDEX IF NOT EXISTS series_created ON series(created_at, slug) WHERE slug IS NOT NULL;
CREATE INDEX IF NOT EXISTS series_chapters ON series(chapter_count, slug) WHERE slug IS NOT NULL;
CREATE INDEX IF NOT EXISTS series_year ON series(year IS NULL, year, slug) WHERE slug IS NOT NULL;
CREATE INDEX IF NOT EXISTS series_year_desc
    ON series(year IS NULL, year DESC, slug DESC) WHERE slug IS NOT NULL;
CREATE TABLE IF NOT EXISTS chapters(
    id INTEGER PRIMARY KEY,
    series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
    relpath TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    sig TEXT NOT NULL,
    base_slug TEXT NOT NULL,
    slug TEXT,
    number REAL NOT NULL,
    volume REAL,
    title TEXT NOT NULL,
    released REAL,
    first_seen REAL NOT NULL,
    date REAL NOT NULL,
    mtime REAL NOT NULL,
    language TEXT NOT NULL,
    scanlator TEXT NOT NULL,
    web TEXT,
    pages TEXT NOT NULL,
    page_count INTEGER NOT NULL,
    info TEXT NOT NULL DEFAULT '{{}}',
    -- KOReader's id of the file (sdk.partial_md5); NULL for image folders.
    partial_md5 TEXT,
    UNIQUE(series_id, slug)
);
CREATE INDEX IF NOT EXISTS chapters_series ON chapters(series_id);
-- Each series' chapters as a scan last applied them, digested (update.listing_of): a
-- rescan compares the walk's listing of a series with this, and looks at the chapter rows
-- of those that differ only; under the empty name, the whole library's (a full rescan that
-- finds it equal looks at no series). Whatever else changes chapters' signatures empties it.
{CHAPTER_LOOKUPS}
CREATE TABLE IF NOT EXISTS listings(relpath TEXT PRIMARY KEY, listing TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS problems(
    relpath TEXT NOT NULL,
    severity TEXT NOT NULL,
    sig TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL,
    PRIMARY KEY(relpath, reason)
);
CREATE TABLE IF NOT EXISTS series_terms(
    series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY(kind, value, series_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS series_terms_series ON series_terms(series_id);
CREATE TABLE IF NOT EXISTS slug_claims(
    scope TEXT NOT NULL,
    slug TEXT NOT NULL,
    relpath TEXT NOT NULL,
    PRIMARY KEY(scope, slug)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tag_names(slug TEXT PRIMARY KEY, name TEXT NOT NULL, nsfw INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS series_fts USING {_FULL_TEXT};
"""


def drop_chapter_lookups(db: sqlite3.Connection) -> None:
    """Before a first scan fills ``chapters``: its lookups are built by
    :func:`build_chapter_lookups` at the end (an index that stops midway gets them back
    when it is next opened, from the schema)."""
    for name in _CHAPTER_LOOKUP_NAMES:
        db.execute(f"DROP INDEX IF EXISTS {name}")


def build_chapter_lookups(db: sqlite3.Connection) -> None:
    """The lookups :func:`drop_chapter_lookups` dropped; nothing when they are there."""
    for statement in CHAPTER_LOOKUPS.split(";"):
        if statement.strip():
            db.execute(statement)


#: The writer's page cache, in KiB (SQLite's default is 2 MB): a first scan's chapter rows
#: and their indexes outgrew 2 MB within a few thousand chapters, and every page spilled to
#: the log mid-transaction was read back for the next rows (writing a chapter's row took
#: 13.5-17 us instead of 6.6-7.1). Held only while a scan writes.
WRITE_CACHE_KIB = 64 * 1024
#: How much of the index file readers map into memory: a page read is then a memory access,
#: not a copy out of the system's cache into each thread's own connection cache (2 MB by
#: default; the searches of one process run on several threads' connections).
READ_MAP_BYTES = 1 << 30


class IndexUnavailable(Exception):
    """The index file cannot be opened or read."""


def connect(path: Path) -> sqlite3.Connection:
    """A connection with the pragmas every user of the index needs."""
    connection = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
    connection.row_factory = sqlite3.Row
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("PRAGMA foreign_keys=ON")
    connection.execute("PRAGMA busy_timeout=30000")
    return connection


@dataclass(frozen=True)
class Snapshot:
    """The library-wide facts the source configuration shows, refreshed after each scan."""

    tags: list[tuple[str, str, bool]]
    languages: list[str]
    updated_at: float
    series: int
    chapters: int


def _forget_signatures_if_page_types_changed(db: sqlite3.Connection) -> None:
    """Every chapter read again at the next scan when the image types taken as pages changed.

    An unchanged file is never reopened, so without this an archive scanned before
    BMP and TIFF were pages would list its other pages only, for good. Slugs and
    dates stay: only the signatures that mark a chapter as read are cleared.
    """
    page_types = ",".join(sorted(IMAGE_TYPES))
    row = db.execute("SELECT value FROM meta WHERE key='page_types'").fetchone()
    if row is not None and row[0] == page_types:
        return
    db.execute("UPDATE chapters SET sig = ''")
    db.execute("UPDATE problems SET sig = '' WHERE severity = 'skipped'")
    db.execute("DELETE FROM listings")
    db.execute("INSERT OR REPLACE INTO meta VALUES('page_types', ?)", (page_types,))


def analyzed(db: sqlite3.Connection) -> bool:
    """Whether the index holds statistics for the query planner (:func:`refresh_statistics`)."""
    return (
        db.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone() is not None
    )


def refresh_statistics(db: sqlite3.Connection) -> None:
    """Count what the search's tables hold, for SQLite's query planner.

    Without counts, a filter on the year walked a sort's index over every series,
    looking each one up, instead of reading the year's hundred off its own index
    (its 20th page: 1.2 ms against 0.06). The search's tables only: 10-15 ms at 5,000 series.
    """
    db.execute("ANALYZE series")
    db.execute("ANALYZE series_terms")


def claim_root(db: sqlite3.Connection, path: Path, root: Path) -> None:
    """Record ``root`` as the index's library, or refuse when it holds another's."""
    wanted = str(root.resolve())
    row = db.execute("SELECT value FROM meta WHERE key = 'root'").fetchone()
    if row is not None and row[0] != wanted:
        raise IndexUnavailable(
            f"the index {path} belongs to the library {row[0]}, not {wanted}: "
            "give each library its own index_path"
        )
    if row is None:
        db.execute("INSERT INTO meta VALUES('root', ?)", (wanted,))


def _migrate(db: sqlite3.Connection, statement: str) -> None:
    """One migration statement; a column an index already has is left as it is."""
    try:
        db.execute(statement)
    except sqlite3.OperationalError as error:
        if "duplicate column" not in str(error):
            raise


class Index:
    """The index file, its schema, and the read queries the source needs."""

    def __init__(self, path: Path, root: Path | None = None):
        """Open (or create) the index at ``path``; with ``root``, refuse unless it is that
        library's (:func:`claim_root`)."""
        self.path = path
        self.write_lock = threading.Lock()
        self._local = threading.local()
        path.parent.mkdir(parents=True, exist_ok=True)
        with self.writer() as db:
            version = None
            try:
                row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
                version = row[0] if row else None
            except sqlite3.OperationalError:
                pass
            migration = MIGRATIONS.get(version or "")
            if migration is not None:
                # Whole or not at all: stopped halfway, the next start would find the
                # full-text table gone and the version unchanged.
                db.execute("BEGIN")
                for statement in migration:
                    _migrate(db, statement)
                db.execute("COMMIT")
                version = SCHEMA_VERSION
            if version not in (None, SCHEMA_VERSION):
                # An index from another version is a cache: drop it and rescan.
                for table in (
                    "listings",
                    "slug_claims",
                    "series_fts",
                    "series_terms",
                    "tag_names",
                    "problems",
                    "chapters",
                    "series",
                    "meta",
                ):
                    db.execute(f"DROP TABLE IF EXISTS {table}")
            db.executescript(SCHEMA)
            if migration is not None:  # it may have cleared signatures the listings vouch for
                db.execute("DELETE FROM listings")
            db.execute("INSERT OR REPLACE INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))
            _forget_signatures_if_page_types_changed(db)
            if root is not None:
                claim_root(db, path, root)

    def files(self) -> frozenset[str]:
        """Absolute paths of the index file, its WAL companions and its lock file."""
        base = str(self.path.resolve())
        return frozenset(base + suffix for suffix in ("", "-wal", "-shm", "-journal", ".lock"))

    @contextmanager
    def writer(self) -> Iterator[sqlite3.Connection]:
        """The single writer connection, under the write lock, with a page cache of
        :data:`WRITE_CACHE_KIB` while it is open."""
        with self.write_lock:
            connection = connect(self.path)
            connection.execute(f"PRAGMA cache_size=-{WRITE_CACHE_KIB}")
            try:
                yield connection
            finally:
                connection.close()

    def reader(self) -> sqlite3.Connection:
        """This thread's read connection."""
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            try:
                connection = connect(self.path)
                connection.execute(f"PRAGMA mmap_size={READ_MAP_BYTES}")
            except sqlite3.Error as error:
                raise IndexUnavailable(f"the library index cannot be opened ({error})") from None
            self._local.connection = connection
        return connection

    def close(self) -> None:
        """Let go of every read connection.

        Only this thread's own connection is closed here: closing one that
        another thread is still reading through crashes the interpreter, so
        the others are dropped and close when the last reference to them goes.
        """
        own = getattr(self._local, "connection", None)
        self._local = threading.local()
        if own is not None:
            with suppress(sqlite3.Error):
                own.close()

    # -- reads -------------------------------------------------------------------

    def series_by_slug(self, slug: str) -> sqlite3.Row | None:
        row: sqlite3.Row | None = (
            self.reader().execute("SELECT * FROM series WHERE slug = ?", (slug,)).fetchone()
        )
        return row

    def chapters_of(self, series_id: int) -> list[sqlite3.Row]:
        return (
            self.reader()
            .execute(
                "SELECT * FROM chapters WHERE series_id = ? AND slug IS NOT NULL "
                "ORDER BY date DESC, number DESC, relpath DESC",
                (series_id,),
            )
            .fetchall()
        )

    def chapter(self, series_slug: str, chapter_slug: str) -> sqlite3.Row | None:
        row: sqlite3.Row | None = (
            self.reader()
            .execute(
                "SELECT c.*, s.slug AS series_slug FROM chapters c JOIN series s ON s.id = c.series_id "
                "WHERE s.slug = ? AND c.slug = ?",
                (series_slug, chapter_slug),
            )
            .fetchone()
        )
        return row

    def page_source(self, series_slug: str, chapter_slug: str) -> sqlite3.Row | None:
        """What the page route needs of a chapter: its file, kind, pages and signature."""
        row: sqlite3.Row | None = (
            self.reader()
            .execute(
                "SELECT c.relpath, c.kind, c.pages, c.sig FROM chapters c "
                "JOIN series s ON s.id = c.series_id WHERE s.slug = ? AND c.slug = ?",
                (series_slug, chapter_slug),
            )
            .fetchone()
        )
        return row

    def chapter_of_file(self, digest: str) -> ChapterFile | None:
        """The listed chapter whose file KOReader names ``digest`` (the first, for copies)."""
        row: sqlite3.Row | None = (
            self.reader()
            .execute(
                "SELECT c.slug, c.page_count, s.slug AS series_slug FROM chapters c "
                "JOIN series s ON s.id = c.series_id WHERE c.partial_md5 = ? "
                "AND c.slug IS NOT NULL AND s.slug IS NOT NULL ORDER BY c.relpath LIMIT 1",
                (digest,),
            )
            .fetchone()
        )
        return (
            None if row is None else ChapterFile(row["series_slug"], row["slug"], row["page_count"])
        )

    def snapshot(self) -> Snapshot:
        db = self.reader()
        tags = [
            (row["slug"], row["name"], bool(row["nsfw"]))
            for row in db.execute("SELECT slug, name, nsfw FROM tag_names ORDER BY slug")
        ]
        languages = [
            row[0]
            for row in db.execute(
                "SELECT DISTINCT value FROM series_terms WHERE kind = 'lang' ORDER BY value"
            )
        ]
        row = db.execute("SELECT value FROM meta WHERE key = 'updated_at'").fetchone()
        counts = db.execute(
            "SELECT (SELECT count(*) FROM series WHERE slug IS NOT NULL), "
            "(SELECT count(*) FROM chapters WHERE slug IS NOT NULL)"
        ).fetchone()
        return Snapshot(
            tags=tags,
            languages=languages,
            updated_at=float(row[0]) if row else 0.0,
            series=counts[0],
            chapters=counts[1],
        )

    def problems(self) -> list[sqlite3.Row]:
        return (
            self.reader()
            .execute("SELECT relpath, severity, reason FROM problems ORDER BY relpath, reason")
            .fetchall()
        )

    def check(self) -> None:
        """Raise :class:`IndexUnavailable` unless the index answers a query."""
        try:
            self.reader().execute("SELECT count(*) FROM meta").fetchone()
        except sqlite3.Error as error:
            raise IndexUnavailable(f"the library index cannot be read ({error})") from None


def loads(value: str | None) -> Any:
    return json.loads(value) if value else None


def now() -> float:
    return time.time()
