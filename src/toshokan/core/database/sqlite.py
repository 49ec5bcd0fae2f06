"""The readers' database in SQLite, in ``data_dir``: the default, needing no server.

Its schema is created here, in place (``CREATE ... IF NOT EXISTS``); it is the
same as the head of the PostgreSQL migrations (:mod:`toshokan.core.database.migrations`),
which a test compares table by table.

Writes are durable before :meth:`SqliteDatabase.transaction` returns: SQLite runs
with ``synchronous=FULL``, so a commit is on disk, not only in the WAL's pages.
"""

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from toshokan.core.data_dir import ELSEWHERE, DataDirError, user
from toshokan.core.database import downloads_schema, follows_schema

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS readers(
        name TEXT PRIMARY KEY,
        password_hash TEXT,
        koreader_hash TEXT,
        created DOUBLE PRECISION NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS reader_keys(
        key_id TEXT PRIMARY KEY,
        reader TEXT NOT NULL,
        key_hash TEXT NOT NULL,
        created DOUBLE PRECISION NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS reader_keys_reader ON reader_keys(reader)",
    """CREATE TABLE IF NOT EXISTS progress(
        reader TEXT NOT NULL,
        source TEXT NOT NULL,
        manga TEXT NOT NULL,
        chapter TEXT NOT NULL,
        page INTEGER NOT NULL,
        pages INTEGER NOT NULL,
        finished INTEGER NOT NULL,
        updated DOUBLE PRECISION NOT NULL,
        device_id TEXT NOT NULL,
        device TEXT NOT NULL,
        inferred INTEGER NOT NULL DEFAULT 0,
        progression DOUBLE PRECISION,
        PRIMARY KEY(reader, source, manga, chapter)
    )""",
    "CREATE INDEX IF NOT EXISTS progress_recent ON progress(reader, updated)",
    """CREATE TABLE IF NOT EXISTS document_progress(
        reader TEXT NOT NULL,
        document TEXT NOT NULL,
        progress TEXT NOT NULL,
        percentage DOUBLE PRECISION NOT NULL,
        updated DOUBLE PRECISION NOT NULL,
        device_id TEXT NOT NULL,
        device TEXT NOT NULL,
        PRIMARY KEY(reader, document)
    )""",
    *follows_schema.TABLES,
    # Kept copies tied to their originals (toshokan.core.keeping.ties).
    """CREATE TABLE IF NOT EXISTS kept_series(
        source TEXT NOT NULL,
        manga TEXT NOT NULL,
        library TEXT NOT NULL,
        folder TEXT NOT NULL,
        kept DOUBLE PRECISION NOT NULL,
        PRIMARY KEY(source, manga)
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS kept_series_folder ON kept_series(library, folder)",
    """CREATE TABLE IF NOT EXISTS kept_chapters(
        source TEXT NOT NULL,
        manga TEXT NOT NULL,
        chapter TEXT NOT NULL,
        library TEXT NOT NULL,
        path TEXT NOT NULL,
        document TEXT NOT NULL,
        local_manga TEXT NOT NULL,
        local_chapter TEXT NOT NULL,
        pages INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        kept DOUBLE PRECISION NOT NULL,
        PRIMARY KEY(source, manga, chapter)
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS kept_chapters_path ON kept_chapters(library, path)",
    "CREATE INDEX IF NOT EXISTS kept_chapters_local ON kept_chapters(library, local_manga, local_chapter)",
    *downloads_schema.TABLES,
)

#: Columns added to a table after it was first created: a database made before gets them
#: (``CREATE TABLE IF NOT EXISTS`` leaves an existing table as it is), as the migrations
#: add them to PostgreSQL. (table, column, its definition)
ADDED = (("progress", "progression", "DOUBLE PRECISION"),)


#: The longest :meth:`SqliteDatabase.close` waits for transactions in flight: longer than a
#: statement waits for a lock (``busy_timeout``).
CLOSE_WAIT = 35.0


def default_database_path(data_dir: Path) -> Path:
    return data_dir / "readers.sqlite3"


class SqliteDatabase:
    """Connections to the readers' database, one per thread (callers run in a thread pool)."""

    def __init__(self, path: Path):
        self.path = path
        self.name = str(path)
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        #: Connections inside a transaction now, and how many deep: :meth:`close` leaves them
        #: be until they are done (closing one under a thread using it crashes the process).
        self._in_use: dict[sqlite3.Connection, int] = {}
        self._idle = threading.Condition(self._lock)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with self.transaction() as cursor:
                for statement in SCHEMA:
                    cursor.execute(statement)
                for table, column, definition in ADDED:
                    present = {row[1] for row in cursor.execute(f"PRAGMA table_info({table})")}
                    if column not in present:
                        cursor.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
        except (OSError, sqlite3.Error) as error:
            self.close()
            raise DataDirError(
                f"the readers' database {path} cannot be opened ({error}): make it and its "
                f"folder writable by {user()}, or move it aside if it is not an SQLite "
                f"database, {ELSEWHERE}"
            ) from None

    def _take(self) -> sqlite3.Connection:
        """This thread's connection (opened on its first use), marked in use."""
        with self._lock:
            connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
            if connection is None:
                connection = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=FULL")
                connection.execute("PRAGMA busy_timeout=30000")
                self._local.connection = connection
                self._opened.append(connection)
            self._in_use[connection] = self._in_use.get(connection, 0) + 1
            return connection

    def _put(self, connection: sqlite3.Connection) -> None:
        with self._lock:
            if self._in_use[connection] > 1:
                self._in_use[connection] -= 1
                return
            del self._in_use[connection]
            if not self._in_use:
                self._idle.notify_all()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Cursor]:
        """A cursor inside one transaction: committed (on disk) on exit, rolled back on error."""
        connection = self._take()
        try:
            cursor = connection.cursor()
            try:
                yield cursor
                connection.commit()
            except BaseException:
                connection.rollback()
                raise
            finally:
                cursor.close()
        finally:
            self._put(connection)

    def close(self) -> None:
        """Close every connection, once the transactions in flight are done: a host stopping
        can still have one running in a worker thread for a request it gave up on. One still
        running after :data:`CLOSE_WAIT` seconds keeps its connection, left to the process's
        end. A transaction begun afterwards opens a connection of its own."""
        with self._lock:
            self._idle.wait_for(lambda: not self._in_use, timeout=CLOSE_WAIT)
            opened, busy = self._opened, set(self._in_use)
            self._opened = [connection for connection in opened if connection in busy]
            self._local = threading.local()
        for connection in opened:
            if connection not in busy:
                with suppress(sqlite3.Error):
                    connection.close()
