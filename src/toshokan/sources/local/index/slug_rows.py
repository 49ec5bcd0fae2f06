"""Writing the slugs chosen by :func:`slugs.assign` into the index, with their claims.

Slugs are unique (per library for series, per series for chapters), so a
change such as ``a -> a-3f9a1c`` and ``a-3f9a1c -> a`` cannot be written row by
row without a momentary duplicate. Every changed row is therefore cleared
first and then given its new slug; unchanged rows are not touched at all.
Every slug handed out is recorded in ``slug_claims`` for good (see :mod:`slugs`).
"""

import sqlite3
from typing import Literal

from toshokan.sources.local.slugs import assign

#: The claims scope of series slugs; chapter slugs are scoped by their series' path.
SERIES_SCOPE = ""


def assign_series_slugs(db: sqlite3.Connection) -> None:
    """Give each new series its slug (a series keeps its slug: its base never changes)."""
    rows = db.execute(
        "SELECT id, relpath, base_slug, slug FROM series WHERE slug IS NULL"
    ).fetchall()
    _store_slugs(db, "series", SERIES_SCOPE, rows)


def assign_chapter_slugs(
    db: sqlite3.Connection, series_relpath: str, rows: list[sqlite3.Row]
) -> None:
    """Give the chapters of one series (all of its rows) their slugs."""
    _store_slugs(db, "chapters", "/" + series_relpath, rows)


def _store_slugs(
    db: sqlite3.Connection,
    table: Literal["series", "chapters"],
    scope: str,
    rows: list[sqlite3.Row],
) -> None:
    """Rows need ``id``, ``relpath``, ``base_slug`` and ``slug``; ``table`` is never user input."""
    claims = {
        slug: relpath
        for slug, relpath in db.execute(
            "SELECT slug, relpath FROM slug_claims WHERE scope = ?", (scope,)
        )
    }
    wanted = assign(((row["relpath"], row["base_slug"]) for row in rows), claims)
    db.executemany(
        "INSERT OR IGNORE INTO slug_claims(scope, slug, relpath) VALUES(?, ?, ?)",
        [(scope, slug, relpath) for relpath, slug in wanted.items() if slug not in claims],
    )
    changed = [row for row in rows if row["slug"] != wanted[row["relpath"]]]
    # New rows (no slug yet, as in a first scan) have nothing to clear.
    db.executemany(
        f"UPDATE {table} SET slug = NULL WHERE id = ?",
        [(row["id"],) for row in changed if row["slug"] is not None],
    )
    db.executemany(
        f"UPDATE {table} SET slug = ? WHERE id = ?",
        [(wanted[row["relpath"]], row["id"]) for row in changed],
    )
