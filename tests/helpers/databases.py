"""The host's database on both engines: SQLite in ``data_dir`` and a PostgreSQL of the test's own.

The stores' behaviour tests take ``database_url`` (parametrized: ``None`` for
SQLite, a PostgreSQL URL) and run once per engine. Each test module gets a
PostgreSQL database of its own, made with a unique name and dropped after the
module, and every test starts with its tables empty. Without a PostgreSQL the
PostgreSQL runs skip (or fail, where live servers are required).
"""

import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.servers import POSTGRES_PORT, listening, wait_listening
from tests.sources.opds.live import need
from toshokan.config import HostSettings
from toshokan.core.database import Database, open_database
from toshokan.core.database.downloads_schema import NAMES as DOWNLOADS
from toshokan.core.database.follows_schema import NAMES

#: The tables every test starts without rows in (the claims last: SQLite has them elsewhere).
TABLES = (
    "readers",
    "reader_keys",
    "progress",
    "document_progress",
    "kept_series",
    "kept_chapters",
    *NAMES,
    *DOWNLOADS,
    "claims",
)
#: The job queue's, on PostgreSQL alone (SQLite's queue is the embedded engine's own table).
QUEUE_TABLES = ("procrastinate_jobs", "procrastinate_periodic_defers")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[int]:
    """The port of a PostgreSQL that accepts ``postgres`` without a password (trust auth).

    Started with ``pg_ctlcluster`` when none listens on 5432, and stopped again afterwards.
    """
    if listening(POSTGRES_PORT):
        yield POSTGRES_PORT
        return
    versions = sorted(Path("/etc/postgresql").glob("*")) if Path("/etc/postgresql").is_dir() else []
    need(
        None
        if versions and shutil.which("pg_ctlcluster")
        else "PostgreSQL is not installed (pg_ctlcluster)"
    )
    command = ["pg_ctlcluster", "--skip-systemctl-redirect", versions[-1].name, "main"]
    subprocess.run([*command, "start"], check=True, capture_output=True, timeout=60)
    if not wait_listening(POSTGRES_PORT, timeout=30):
        pytest.fail("PostgreSQL did not start")
    try:
        yield POSTGRES_PORT
    finally:
        subprocess.run([*command, "stop"], check=False, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def module_database_url(postgres_server: int) -> Iterator[str]:
    """A PostgreSQL database for this test module alone, dropped afterwards."""
    import psycopg

    name = f"toshokan_test_{secrets.token_hex(6)}"
    admin = f"postgresql://postgres@127.0.0.1:{postgres_server}/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    try:
        yield f"postgresql://postgres@127.0.0.1:{postgres_server}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest) -> str | None:
    """``None`` (SQLite in the data directory) or a PostgreSQL URL whose tables are empty."""
    if request.param == "sqlite":
        return None
    return emptied(request.getfixturevalue("module_database_url"))


def emptied(url: str) -> str:
    """``url``, its schema migrated and every table of it emptied."""
    from toshokan.core.database.postgres import PostgresDatabase

    database = PostgresDatabase(url)
    with database.transaction() as cursor:
        cursor.execute(f"TRUNCATE {', '.join((*TABLES, *QUEUE_TABLES))} CASCADE")
    database.close()
    return url


def open_for(data_dir: Path, url: str | None) -> Database:
    """The database a host with ``data_dir`` and ``[cluster] database = url`` opens."""
    return open_database(HostSettings(host={"data_dir": data_dir}, cluster={"database": url}))
