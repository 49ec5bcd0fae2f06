"""Closing the readers' SQLite database while a worker thread is inside a transaction (a host
stopping with a request's database call still running): the call finishes and commits, and
nothing is closed under it (which crashes the process, not just the call)."""

import threading
from pathlib import Path

import pytest

from toshokan.core.database import sqlite
from toshokan.core.database.sqlite import SqliteDatabase


def _reader_count(path: Path) -> int:
    check = SqliteDatabase(path)
    try:
        with check.transaction() as cursor:
            return int(cursor.execute("SELECT count(*) FROM readers").fetchone()[0])
    finally:
        check.close()


def test_close_waits_for_a_transaction_in_flight_and_it_commits(tmp_path: Path) -> None:
    database = SqliteDatabase(tmp_path / "readers.sqlite3")
    inside, release = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def writer() -> None:
        try:
            with database.transaction() as cursor:
                cursor.execute("INSERT INTO readers(name, created) VALUES ('ann', 0)")
                inside.set()
                release.wait(10)
                cursor.execute("SELECT count(*) FROM readers").fetchone()
        except BaseException as error:  # reported by the test below
            failures.append(error)

    thread = threading.Thread(target=writer)
    thread.start()
    assert inside.wait(10)
    closer = threading.Thread(target=database.close)
    closer.start()
    closer.join(0.3)
    assert closer.is_alive(), "close() returned while a transaction was still running"
    release.set()
    thread.join(10)
    closer.join(10)
    assert not closer.is_alive()
    assert failures == []
    assert _reader_count(tmp_path / "readers.sqlite3") == 1


def test_a_transaction_outlasting_the_wait_keeps_its_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite, "CLOSE_WAIT", 0.1)
    database = SqliteDatabase(tmp_path / "readers.sqlite3")
    inside, release = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def writer() -> None:
        try:
            with database.transaction() as cursor:
                inside.set()
                release.wait(10)
                cursor.execute("INSERT INTO readers(name, created) VALUES ('bo', 0)")
        except BaseException as error:  # reported by the test below
            failures.append(error)

    thread = threading.Thread(target=writer)
    thread.start()
    assert inside.wait(10)
    database.close()  # gives up waiting, and leaves the busy connection open
    release.set()
    thread.join(10)
    assert failures == []
    assert _reader_count(tmp_path / "readers.sqlite3") == 1
    database.close()  # the connection kept is closed once it is free
    with database.transaction() as cursor:  # a later transaction opens one of its own
        assert cursor.execute("SELECT count(*) FROM readers").fetchone()[0] == 1
    database.close()
