"""The host's database in PostgreSQL (``[cluster] database``), shared by every replica.

psycopg 3 with a small connection pool: the stores are synchronous and called
from worker threads, each borrowing a connection for one transaction. A
transaction returns only once PostgreSQL committed it (``synchronous_commit``
as the server has it, on by default), so an acknowledged write survives the
replica that made it being killed.

The schema is PostgreSQL's through Alembic migrations (``migrations/``),
applied at start-up by whichever replica gets there first: an advisory lock
makes the others wait, then find nothing left to do. Alembic because it is the
maintained migration tool of the Python world: it keeps the version in the
database it migrates, runs each migration in a transaction (PostgreSQL's DDL is
transactional, so a failed one leaves nothing half done), and takes plain SQL
(``op.execute``), so a migration reads as the schema it makes. It brings
SQLAlchemy, used only as its engine.
"""

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.resources import files
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from alembic import command
from alembic.config import Config
from psycopg_pool import ConnectionPool, PoolTimeout
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from toshokan.core.database.errors import DatabaseDown, DatabaseUnavailable

log = logging.getLogger("toshokan.database")

#: Key of the session-level advisory lock held while migrations run (any constant bigint
#: the host's database uses for nothing else).
MIGRATION_LOCK = 0x746F73686F6B616E  # "toshokan"
#: Seconds to wait for PostgreSQL to accept a connection at start-up.
CONNECT_TIMEOUT = 10
#: Connections a process keeps: enough for the worker threads the stores run in.
POOL_SIZE = 8


def without_password(url: str) -> str:
    """``url`` without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    netloc = f"{parts.username}@{host}" if parts.username else host
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


class PgCursor:
    """A psycopg cursor taking the ``?`` placeholders the stores are written with."""

    def __init__(self, cursor: psycopg.Cursor[Any]):
        self._cursor = cursor

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    def execute(self, statement: str, parameters: Sequence[Any] = (), /) -> "PgCursor":
        self._cursor.execute(placeholders(statement), parameters)
        return self

    def fetchone(self) -> Any:
        return self._cursor.fetchone()

    def fetchall(self) -> list[Any]:
        return self._cursor.fetchall()


def placeholders(statement: str) -> str:
    """sqlite3's ``?`` as psycopg's ``%s`` (a literal ``%`` doubled); no statement of the
    stores has a ``?`` inside a string literal."""
    return statement.replace("%", "%%").replace("?", "%s")


class PostgresDatabase:
    """A pool of connections to one PostgreSQL database, its schema migrated on opening."""

    def __init__(self, url: str):
        self.url = url
        self.name = without_password(url)
        check_reachable(url)  # a stopped server is one line, before Alembic connects
        try:
            migrate(url)
        except (psycopg.OperationalError, psycopg.InterfaceError) as error:
            raise unavailable(url, error) from None
        except psycopg.Error as error:  # the user may not create tables, say
            raise DatabaseUnavailable(
                f"the database {self.name} refused the schema's migration: {reason(url, error)}"
            ) from None
        self._pool: ConnectionPool | None = None
        self._lock = threading.Lock()

    def _opened_pool(self) -> ConnectionPool:
        # Opened on first use, so a parent process that only checks the configuration
        # (several workers build the app once before forking their own) holds no connections.
        with self._lock:
            if self._pool is None:
                self._pool = ConnectionPool(
                    self.url,
                    min_size=1,
                    max_size=POOL_SIZE,
                    timeout=CONNECT_TIMEOUT,
                    kwargs={"connect_timeout": CONNECT_TIMEOUT},
                    # A connection is tried before it is lent, so one the server dropped
                    # (a restart, a fail-over) is replaced instead of failing a request.
                    check=ConnectionPool.check_connection,
                    name="toshokan",
                    open=True,
                )
            return self._pool

    @contextmanager
    def transaction(self) -> Iterator[PgCursor]:
        """A cursor inside one transaction: committed on exit, rolled back on error.

        The database not answering is :class:`DatabaseDown` (a 502 for the request at hand).
        """
        try:
            with (
                self._opened_pool().connection() as connection,
                connection.transaction(),
                connection.cursor() as cursor,
            ):
                yield PgCursor(cursor)
        except (psycopg.OperationalError, PoolTimeout) as error:
            log.warning("the database %s did not answer: %s", self.name, reason(self.url, error))
            raise DatabaseDown() from None

    def answer(self, timeout: float) -> None:
        """``SELECT 1`` on a pooled connection borrowed within ``timeout`` (the pool tries it
        first, so a dropped connection is replaced rather than reported); a failure is
        :class:`DatabaseNotAnswering` saying why, without the URL, since readiness is public."""
        try:
            with self._opened_pool().connection(timeout=timeout) as connection:
                connection.execute("SELECT 1")
        except (psycopg.OperationalError, PoolTimeout) as error:
            raise DatabaseNotAnswering(
                f"PostgreSQL did not answer: {reason(self.url, error)}"
            ) from None

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()


class DatabaseNotAnswering(Exception):
    """The database did not answer a readiness check; the message says why."""


def check_reachable(url: str) -> None:
    """Connect once and let go: whether PostgreSQL answers, without changing anything."""
    try:
        psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT).close()
    except (psycopg.OperationalError, psycopg.InterfaceError) as error:
        raise unavailable(url, error) from None


def unavailable(url: str, error: BaseException) -> DatabaseUnavailable:
    return DatabaseUnavailable(
        f"the database {without_password(url)} cannot be reached: {reason(url, error)}"
    )


def reason(url: str, error: BaseException) -> str:
    """The first line of ``error``'s message, never holding ``url``'s password."""
    text = first_line(error)
    password = urlsplit(url).password
    if password:  # libpq quotes parts of a connection string it cannot parse
        text = text.replace(password, "***")
    return text


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def migrate(url: str) -> None:
    """Bring the schema to the newest migration, one replica at a time.

    Alembic runs on a SQLAlchemy connection (SQLAlchemy serves as Alembic's engine
    only; the stores talk to psycopg directly). The advisory lock is taken on
    that same connection before Alembic reads the version table, and released
    after it committed, so replicas starting together migrate once.
    """
    engine = create_engine(
        sqlalchemy_url(url), poolclass=NullPool, connect_args={"connect_timeout": CONNECT_TIMEOUT}
    )
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
            connection.commit()
            try:
                config = Config()
                config.set_main_option("script_location", str(files(__package__) / "migrations"))
                config.attributes["connection"] = connection
                command.upgrade(config, "head")
                connection.commit()
            finally:
                # A failed migration leaves its transaction aborted; the session's lock
                # outlives the rollback and is let go after it.
                connection.rollback()
                connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
                connection.commit()
    except DBAPIError as error:
        if isinstance(error.orig, psycopg.Error):
            raise error.orig from None
        raise
    finally:
        engine.dispose()


def sqlalchemy_url(url: str) -> str:
    """The URL SQLAlchemy takes for psycopg 3: ``postgresql+psycopg://...``."""
    rest = url.partition("://")[2]
    return f"postgresql+psycopg://{rest}"
