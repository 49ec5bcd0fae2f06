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

from toshokan.core.database import follows_schema

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
)


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
        path.parent.mkdir(parents=True, exist_ok=True)
        with self.transaction() as cursor:
            for statement in SCHEMA:
                cursor.execute(statement)

    def _connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            connection.execute("PRAGMA busy_timeout=30000")
            self._local.connection = connection
            with self._lock:
                self._opened.append(connection)
        return connection

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Cursor]:
        """A cursor inside one transaction: committed (on disk) on exit, rolled back on error."""
        connection = self._connection()
        cursor = connection.cursor()
        try:
            yield cursor
            connection.commit()
        except BaseException:
            connection.rollback()
            raise
        finally:
            cursor.close()

    def close(self) -> None:
        """Close every connection; called once no thread uses the database any more."""
        with self._lock:
            opened, self._opened = self._opened, []
        for connection in opened:
            with suppress(sqlite3.Error):
                connection.close()
        self._local = threading.local()
