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


class _Held:
    """A transaction held open in a thread of its own: it writes a reader, waits for
    ``release``, then runs one more statement and commits."""

    def __init__(self, database: SqliteDatabase, name: str):
        self.database, self.name = database, name
        self.inside, self.release = threading.Event(), threading.Event()
        self.failures: list[BaseException] = []
        self.thread = threading.Thread(target=self._write)
        self.thread.start()
        assert self.inside.wait(10)

    def _write(self) -> None:
        try:
            with self.database.transaction() as cursor:
                cursor.execute("INSERT INTO readers(name, created) VALUES (?, 0)", (self.name,))
                self.inside.set()
                self.release.wait(10)
                cursor.execute("SELECT count(*) FROM readers").fetchone()
        except BaseException as error:  # reported by the test
            self.failures.append(error)

    def finish(self) -> None:
        self.release.set()
        self.thread.join(10)
        assert self.failures == []


def test_close_waits_for_a_transaction_in_flight_and_it_commits(tmp_path: Path) -> None:
    database = SqliteDatabase(tmp_path / "readers.sqlite3")
    held = _Held(database, "ann")
    closer = threading.Thread(target=database.close)
    closer.start()
    closer.join(0.3)
    assert closer.is_alive(), "close() returned while a transaction was still running"
    held.finish()
    closer.join(10)
    assert not closer.is_alive()
    assert _reader_count(tmp_path / "readers.sqlite3") == 1


def test_a_transaction_outlasting_the_wait_keeps_its_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite, "CLOSE_WAIT", 0.1)
    database = SqliteDatabase(tmp_path / "readers.sqlite3")
    held = _Held(database, "bo")
    database.close()  # gives up waiting, and leaves the busy connection open
    held.finish()
    assert _reader_count(tmp_path / "readers.sqlite3") == 1
    database.close()  # the connection kept is closed once it is free
    with database.transaction() as cursor:  # a later transaction opens one of its own
        assert cursor.execute("SELECT count(*) FROM readers").fetchone()[0] == 1
    database.close()
