"""Writing the slugs chosen by :func:`slugs.assign` into the index.

Slugs are unique (per library for series, per series for chapters), so a
swap such as ``a -> a-2`` and ``a-2 -> a`` cannot be written row by row
without a momentary duplicate. Every changed row is therefore cleared first
and then given its new slug; unchanged rows are not touched at all.
"""

import sqlite3
from typing import Literal

from toshokan.sources.local.slugs import assign


def assign_series_slugs(db: sqlite3.Connection) -> None:
    """Give every series its slug; needed whenever a series was added or removed."""
    rows = db.execute("SELECT id, relpath, base_slug, slug FROM series").fetchall()
    _store_slugs(db, "series", rows)


def assign_chapter_slugs(db: sqlite3.Connection, rows: list[sqlite3.Row]) -> None:
    """Give the chapters of one series (all of its rows) their slugs."""
    _store_slugs(db, "chapters", rows)


def _store_slugs(
    db: sqlite3.Connection, table: Literal["series", "chapters"], rows: list[sqlite3.Row]
) -> None:
    """Rows need ``id``, ``relpath``, ``base_slug`` and ``slug``; ``table`` is never user input."""
    wanted = assign((row["relpath"], row["base_slug"]) for row in rows)
    changed = [row for row in rows if row["slug"] != wanted[row["relpath"]]]
    for row in changed:
        db.execute(f"UPDATE {table} SET slug = NULL WHERE id = ?", (row["id"],))
    for row in changed:
        db.execute(f"UPDATE {table} SET slug = ? WHERE id = ?", (wanted[row["relpath"]], row["id"]))
