"""The progress store's rules that every face relies on: streamed pages only move a reader
forward, an explicit write always wins, and a manga's or a reader's positions come at once."""

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.databases import open_for
from toshokan.core.database import SqliteDatabase
from toshokan.core.progress import ChapterRef, Position, ProgressStore


@pytest.fixture
def store(tmp_path: Path, database_url: str | None) -> Iterator[ProgressStore]:
    database = open_for(tmp_path, database_url)
    yield ProgressStore(database)
    database.close()


REF = ChapterRef("local", "paper-cranes", "ch-1")


def test_streamed_pages_only_move_forward(store: ProgressStore) -> None:
    assert store.record("mika", REF, Position(5, 20, False, 100.0), inferred=True)
    # A reader preloading page 3 again after reaching 5 does not move the reader back...
    assert not store.record("mika", REF, Position(3, 20, False, 200.0), inferred=True)
    assert store.position("mika", REF) == Position(5, 20, False, 100.0)
    assert store.record("mika", REF, Position(6, 20, False, 300.0), inferred=True)
    assert store.position("mika", REF) == Position(6, 20, False, 300.0)


def test_an_explicit_write_wins_over_an_inferred_one(store: ProgressStore) -> None:
    assert store.record("mika", REF, Position(9, 20, False, 500.0), inferred=True)
    # The reader says "page 2", with a client clock behind the host's: it still wins.
    assert store.record("mika", REF, Position(2, 20, False, 400.0))
    assert store.position("mika", REF) == Position(2, 20, False, 400.0)
    # Streaming no further than that changes nothing; streaming past it moves forward.
    assert not store.record("mika", REF, Position(1, 20, False, 600.0), inferred=True)
    assert store.record("mika", REF, Position(3, 20, False, 700.0), inferred=True)


def test_streaming_never_reopens_a_finished_chapter(store: ProgressStore) -> None:
    assert store.record("mika", REF, Position(19, 20, True, 100.0))
    assert not store.record("mika", REF, Position(0, 20, False, 200.0), inferred=True)
    assert store.position("mika", REF) == Position(19, 20, True, 100.0)


def test_a_mangas_positions_and_the_recent_ones(store: ProgressStore) -> None:
    other = ChapterRef("local", "paper-cranes", "ch-2")
    elsewhere = ChapterRef("mangadex", "a-silent-voice", "ch-9")
    store.record("mika", REF, Position(4, 20, False, 100.0))
    store.record("mika", other, Position(1, 18, False, 300.0))
    store.record("mika", elsewhere, Position(7, 30, False, 200.0))
    store.record("ren", REF, Position(11, 20, False, 400.0))
    assert store.positions("mika", "local", "paper-cranes") == {
        "ch-1": Position(4, 20, False, 100.0),
        "ch-2": Position(1, 18, False, 300.0),
    }
    assert [ref for ref, _ in store.recent("mika", 2)] == [other, elsewhere]
    assert store.positions("nobody", "local", "paper-cranes") == {}


def test_a_clients_own_share_is_kept_until_another_write_moves_the_place(
    store: ProgressStore,
) -> None:
    sent = Position(1, 3, False, 100.0, "urn:uuid:1", "Tablet", progression=0.5)
    assert store.record("mika", REF, sent)
    assert store.position("mika", REF) == sent
    # Another face moves the place and sends no share: none is kept.
    assert store.record("mika", REF, Position(2, 3, True, 200.0))
    found = store.position("mika", REF)
    assert found is not None and found.progression is None


def test_a_database_made_before_shares_were_kept_gets_their_column(tmp_path: Path) -> None:
    path = tmp_path / "readers.sqlite3"
    with sqlite3.connect(path) as old:
        old.execute(
            "CREATE TABLE progress(reader TEXT NOT NULL, source TEXT NOT NULL, "
            "manga TEXT NOT NULL, chapter TEXT NOT NULL, page INTEGER NOT NULL, "
            "pages INTEGER NOT NULL, finished INTEGER NOT NULL, updated DOUBLE PRECISION NOT NULL, "
            "device_id TEXT NOT NULL, device TEXT NOT NULL, inferred INTEGER NOT NULL DEFAULT 0, "
            "PRIMARY KEY(reader, source, manga, chapter))"
        )
        old.execute(
            "INSERT INTO progress VALUES('mika', 'local', 'paper-cranes', 'ch-1', 4, 9, 0, 1.0, "
            "'', 'KOReader', 0)"
        )
    database = SqliteDatabase(path)
    store = ProgressStore(database)
    assert store.position("mika", REF) == Position(4, 9, False, 1.0, "", "KOReader")
    assert store.record("mika", REF, Position(5, 9, False, 2.0, progression=0.6))
    found = store.position("mika", REF)
    assert found is not None and found.progression == 0.6
    database.close()
