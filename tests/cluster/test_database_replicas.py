"""Replicas sharing one PostgreSQL: one migration, progress that outlives a killed replica,
and a host that will not start without its database.

Replicas are real ``toshokan serve`` processes (the harness in
:mod:`tests.cluster.replicas`), each with its own data directory.
"""

import concurrent.futures
import os
import secrets
import subprocess
import sys
import threading
from importlib.resources import files
from pathlib import Path

import httpx
import psycopg
import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory
from click.testing import CliRunner

from tests.cluster.library import library, write_config
from tests.cluster.replicas import Replica, start_replica
from tests.helpers.databases import TABLES
from tests.helpers.serving import free_port, serve_command
from toshokan.cli import main
from toshokan.core.database import Cursor, SqliteDatabase
from toshokan.core.database.postgres import PostgresDatabase

KOREADER = {
    "x-auth-user": "anyone",
    "x-auth-key": "anything",
    "accept": "application/vnd.koreader.v1+json",
}


@pytest.fixture
def empty_url(module_database_url: str) -> str:
    """An empty database, no schema yet: the module's own, emptied of everything."""
    with psycopg.connect(module_database_url, autocommit=True) as connection:
        connection.execute("DROP SCHEMA public CASCADE")
        connection.execute("CREATE SCHEMA public")
    return module_database_url


def test_replicas_opening_a_new_database_at_once_migrate_it_once(empty_url: str) -> None:
    """Without the lock, the second replica's CREATE TABLE fails on the first's tables."""
    start = threading.Barrier(4)

    def open_at_once() -> None:
        start.wait()
        PostgresDatabase(empty_url).close()

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for opened in [pool.submit(open_at_once) for _ in range(4)]:
            opened.result()
    config = Config()
    config.set_main_option("script_location", str(files("toshokan.core.database") / "migrations"))
    newest = ScriptDirectory.from_config(config).get_current_head()
    assert newest is not None
    with psycopg.connect(empty_url) as connection:
        assert connection.execute("SELECT version_num FROM alembic_version").fetchall() == [
            (newest,)
        ]


def columns_of(cursor: Cursor, engine: str, table: str) -> list[tuple[str, bool, bool]]:
    """(name, not null, part of the primary key) of each column, in order."""
    if engine == "sqlite":
        rows = cursor.execute(f"PRAGMA table_info({table})").fetchall()
        return [(name, bool(notnull) or bool(pk), bool(pk)) for _, name, _, notnull, _, pk in rows]
    rows = cursor.execute(
        "SELECT c.column_name, c.is_nullable = 'NO', EXISTS(SELECT 1 FROM "
        "information_schema.key_column_usage k JOIN information_schema.table_constraints t "
        "ON t.constraint_name = k.constraint_name WHERE t.constraint_type = 'PRIMARY KEY' "
        "AND k.table_name = c.table_name AND k.column_name = c.column_name) "
        "FROM information_schema.columns c WHERE c.table_name = ? ORDER BY c.ordinal_position",
        (table,),
    ).fetchall()
    return [(name, bool(not_null), bool(key)) for name, not_null, key in rows]


def test_the_migrations_give_postgresql_the_schema_sqlite_has(
    empty_url: str, tmp_path: Path
) -> None:
    """The stores' statements run on both, so the readers' tables must match column by column."""
    sqlite, postgres = SqliteDatabase(tmp_path / "readers.sqlite3"), PostgresDatabase(empty_url)
    with sqlite.transaction() as lite, postgres.transaction() as pg:
        for table in TABLES[:-1]:  # the claims live in each library's index under SQLite
            assert columns_of(lite, "sqlite", table) == columns_of(pg, "postgresql", table)
    sqlite.close()
    postgres.close()


#: Replicas behind one address: the links (and so the hashes) they build name it, not their own.
PUBLIC = {"TOSHOKAN_HOST__PUBLIC_URL": "https://comics.example"}


def kosync_progress(replica: Replica, document: str) -> httpx.Response:
    return httpx.get(
        f"{replica.url}/_/kosync/syncs/progress/{document}", headers=KOREADER, timeout=10
    )


def test_progress_written_on_one_replica_is_read_on_another_after_it_is_killed(
    empty_url: str, tmp_path: Path
) -> None:
    config = write_config(
        tmp_path / "toshokan.toml",
        library(tmp_path / "library"),
        f'\n[cluster]\ndatabase = "{empty_url}"\n',
    )
    with concurrent.futures.ThreadPoolExecutor(2) as pool:  # both start at once, on no schema
        started = [
            pool.submit(start_replica, config, tmp_path / f"replica-{index}", env=PUBLIC)
            for index in (0, 1)
        ]
        writer, reader = (future.result() for future in started)
    applied = [r for r in (writer, reader) if "migration 0001 applied" in r.output()]
    assert len(applied) == 1  # one replica migrated; the other waited, then had nothing to do
    try:
        documents = [f"{index:032x}" for index in range(1, 21)]
        for number, document in enumerate(documents):
            update = {
                "document": document,
                "progress": f"/body/p[{number}]",
                "percentage": number / 100,
                "device": "Kobo",
                "device_id": "kobo-1",
            }
            answer = httpx.put(
                f"{writer.url}/_/kosync/syncs/progress", json=update, headers=KOREADER, timeout=10
            )
            assert answer.status_code == 200, answer.text
        writer.kill()  # SIGKILL: nothing of the replica's runs after the last answer
        for number, document in enumerate(documents):
            kept = kosync_progress(reader, document).json()
            assert kept["progress"] == f"/body/p[{number}]"
            assert kept["device"] == "Kobo"
        # Both replicas hand out the same slugs and report one manifest hash.
        search = {"page": 1, "sort": "title", "direction": "asc"}
        revived = start_replica(config, tmp_path / "replica-2", env=PUBLIC)
        try:
            seen = [
                (
                    httpx.get(f"{r.url}/", timeout=10).json()["hash"],
                    httpx.post(f"{r.url}/local/search", json=search, timeout=10).json(),
                )
                for r in (reader, revived)
            ]
            assert seen[0] == seen[1]
        finally:
            revived.stop()
    finally:
        writer.stop()
        assert "Traceback" not in reader.stop()


def unreachable_config(tmp_path: Path) -> tuple[Path, int]:
    port = free_port()  # nothing listens there
    (tmp_path / "library").mkdir()
    config = write_config(
        tmp_path / "toshokan.toml",
        tmp_path / "library",
        f'\n[cluster]\ndatabase = "postgresql://toshokan:s3cret-pw@127.0.0.1:{port}/toshokan"\n',
    )
    return config, port


def test_check_config_names_an_unreachable_database_in_one_line(tmp_path: Path) -> None:
    config, port = unreachable_config(tmp_path)
    result = CliRunner().invoke(main, ["check-config", str(config)])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert f"postgresql://toshokan@127.0.0.1:{port}/toshokan cannot be reached" in lines[0]
    assert "s3cret-pw" not in result.output


def test_serve_stops_with_one_line_when_the_database_is_unreachable(tmp_path: Path) -> None:
    config, port = unreachable_config(tmp_path)
    finished = subprocess.run(
        serve_command("--config", str(config), "--port", str(free_port())),
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TOSHOKAN_HOST__DATA_DIR": str(tmp_path / "data")},
    )
    assert finished.returncode == 1
    lines = finished.stderr.strip().splitlines()
    assert lines == [
        f"toshokan: the database postgresql://toshokan@127.0.0.1:{port}/toshokan cannot be "
        f'reached: connection failed: connection to server at "127.0.0.1", port {port} failed: '
        "Connection refused"
    ], finished.stderr
    assert "s3cret-pw" not in finished.stdout + finished.stderr


def test_a_user_who_may_not_create_the_schema_is_told_in_one_line(
    empty_url: str, tmp_path: Path
) -> None:
    role = f"toshokan_reader_{secrets.token_hex(4)}"
    base, name = empty_url.rsplit("/", 1)
    with psycopg.connect(empty_url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
        admin.execute(f"GRANT USAGE ON SCHEMA public TO {role}")  # may read, not create
        try:
            limited = base.replace("postgres@", f"{role}@") + f"/{name}"
            (tmp_path / "library").mkdir()
            config = write_config(
                tmp_path / "toshokan.toml",
                tmp_path / "library",
                f'\n[cluster]\ndatabase = "{limited}"\n',
            )
            result = CliRunner().invoke(main, ["--config", str(config), "readers", "list"])
        finally:
            admin.execute(f"DROP OWNED BY {role}")
            admin.execute(f"DROP ROLE {role}")
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"toshokan: the database {limited} refused the schema's migration: "
        "permission denied for schema public"
    ]


@pytest.mark.parametrize("package", ["psycopg", "psycopg_pool", "alembic"])
@pytest.mark.parametrize("command", ["check-config", "serve"])
def test_a_missing_package_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package: str, command: str
) -> None:
    config, _ = unreachable_config(tmp_path)
    monkeypatch.setitem(sys.modules, package, None)  # as if it were not installed
    monkeypatch.delitem(sys.modules, "toshokan.core.database.postgres")
    arguments = (
        [command, str(config)]
        if command == "check-config"
        else [command, "--config", str(config), "--port", str(free_port())]
    )
    result = CliRunner().invoke(main, arguments, env={"TOSHOKAN_HOST__DATA_DIR": str(tmp_path)})
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"toshokan: [cluster] database needs the {package} package: "
        "pip install 'toshokan[postgresql]'"
    ]
