"""The host's own database: reader accounts, reading progress and, shared, slug claims.

SQLite in ``data_dir`` by default (no server needed), PostgreSQL when
``[cluster] database`` names one, so that every replica of the host reads and
writes the same readers, progress and claims. No ORM: the stores are a few
tables and a handful of statements, each plain SQL both engines speak
(``ON CONFLICT ... DO UPDATE ... WHERE`` included; types are ``TEXT``,
``INTEGER`` and ``DOUBLE PRECISION``; no auto-increment keys, whose spelling
differs). The one dialect difference is the parameter style: sqlite3 takes
``?``, psycopg ``%s``. Statements are written with ``?`` and every one passes
through :meth:`Database.transaction`, where the PostgreSQL backend rewrites them.
"""

import logging
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol, runtime_checkable

from toshokan.config import HostSettings
from toshokan.core.database.errors import DatabaseDown, DatabaseUnavailable
from toshokan.core.database.sqlite import SqliteDatabase, default_database_path


class Cursor(Protocol):
    """What the stores use of a DB-API cursor."""

    @property
    def rowcount(self) -> int: ...

    def execute(self, statement: str, parameters: Sequence[Any] = ..., /) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Database(Protocol):
    """One engine's connections; every statement runs inside :meth:`transaction`."""

    #: What the database is, for messages: a path, or a URL without its password.
    name: str

    def transaction(self) -> AbstractContextManager[Cursor]:
        """A cursor inside one transaction: committed (durably) on exit, rolled back on error."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class ServerDatabase(Database, Protocol):
    """A database on a server, which may stop answering while the host runs (PostgreSQL's;
    SQLite in ``data_dir`` answers as long as the process does)."""

    def answer(self, timeout: float) -> None:
        """Return once the database answers a query; raise, saying why without credentials,
        when it does not within ``timeout`` seconds (for ``/_/ready``)."""
        ...


def open_database(settings: HostSettings) -> Database:
    """The database ``settings`` configure, its schema brought up to date.

    Raises :class:`DatabaseUnavailable` when PostgreSQL is configured and cannot be reached
    (or its driver is not installed), so the host stops before serving anything.
    """
    url = settings.cluster.database
    if url is None:
        return SqliteDatabase(default_database_path(settings.host.data_dir))
    with _postgres_driver():
        from toshokan.core.database.postgres import PostgresDatabase
    return PostgresDatabase(url)


def check_database(settings: HostSettings) -> None:
    """Raise :class:`DatabaseUnavailable` unless the configured database answers; changes nothing."""
    url = settings.cluster.database
    if url is not None:
        with _postgres_driver():
            from toshokan.core.database.postgres import check_reachable
        check_reachable(url)


@contextmanager
def _postgres_driver() -> Iterator[None]:
    """Around importing the PostgreSQL backend (psycopg, its pool, Alembic): a missing
    package is :class:`DatabaseUnavailable` naming it, not a traceback."""
    # Alembic describes itself at info while it loads and on every start; the migrations
    # applied are logged by its environment (migrations/env.py), by the replica applying them.
    for chatty in ("alembic.runtime.plugins", "alembic.runtime.migration"):
        logging.getLogger(chatty).setLevel(logging.WARNING)
    try:
        yield
    except ImportError as error:
        raise DatabaseUnavailable(
            f"[cluster] database needs the {error.name or 'psycopg'} package: "
            "pip install 'toshokan[postgresql]'"
        ) from None


__all__ = [
    "Cursor",
    "Database",
    "DatabaseDown",
    "DatabaseUnavailable",
    "ServerDatabase",
    "SqliteDatabase",
    "check_database",
    "default_database_path",
    "open_database",
]
