"""Writing the slugs chosen by :func:`slugs.assign` into the index, with their claims;
and the time each chapter first entered the library, claimed the same way.

Slugs are unique (per library for series, per series for chapters), so a
change such as ``a -> a-3f9a1c`` and ``a-3f9a1c -> a`` cannot be written row by
row without a momentary duplicate. Every changed row is therefore cleared
first and then given its new slug; unchanged rows are not touched at all.

Every slug handed out is claimed for good (see :mod:`slugs`): in the index's own
``slug_claims`` table, or, when the host shares claims between its replicas
(:attr:`HostServices.claims`), in the host's database, so that a replica that
saw colliding names arrive in another order still hands out the same slugs,
and a chapter is dated by the first replica to see it, not by each one's scan.
"""

import sqlite3
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from toshokan.sdk import Claims
from toshokan.sources.local.slugs import assign

#: The claims scope of series slugs; chapter slugs are scoped by their series' path.
SERIES_SCOPE = ""
#: Scopes of first-seen times, one per series: ``FIRST_SEEN`` + the series' path.
FIRST_SEEN = "first-seen/"


class LibraryClaims(Protocol):
    """The claims of one library: slug -> relpath, per scope, and chapters' first-seen times."""

    def held(self, scope: str) -> dict[str, str]: ...

    def claim(self, scope: str, wanted: Mapping[str, str]) -> dict[str, str]:
        """Claim the free slugs of ``wanted``; the claims of the scope afterwards: every
        one, or those of ``wanted``'s slugs when each was free (the others are as held)."""
        ...

    def first_seen(self, series_relpath: str, seen: Mapping[str, float]) -> dict[str, float]:
        """When each new chapter (relpath -> this scan's time) of a series first entered the
        library: this scan's time, unless another replica saw the chapter first."""
        ...


class IndexClaims:
    """Claims kept in the index itself: a lone host's."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def held(self, scope: str) -> dict[str, str]:
        return {
            slug: relpath
            for slug, relpath in self.db.execute(
                "SELECT slug, relpath FROM slug_claims WHERE scope = ?", (scope,)
            )
        }

    def claim(self, scope: str, wanted: Mapping[str, str]) -> dict[str, str]:
        before = self.db.total_changes
        self.db.executemany(
            "INSERT OR IGNORE INTO slug_claims(scope, slug, relpath) VALUES(?, ?, ?)",
            [(scope, slug, relpath) for slug, relpath in wanted.items()],
        )
        if self.db.total_changes - before == len(wanted):
            return dict(wanted)  # each was free: the scope's claims need no reading back
        return self.held(scope)

    def first_seen(self, series_relpath: str, seen: Mapping[str, float]) -> dict[str, float]:
        return dict(seen)  # the index is the library's only record: new to it is new


class SharedClaims:
    """Claims the host keeps for every replica, under the library's source slug."""

    def __init__(self, shared: Claims, source: str):
        self.shared = shared
        self.source = source

    def held(self, scope: str) -> dict[str, str]:
        return self.shared.held(self.source, scope)

    def claim(self, scope: str, wanted: Mapping[str, str]) -> dict[str, str]:
        return self.shared.claim(self.source, scope, wanted)

    def first_seen(self, series_relpath: str, seen: Mapping[str, float]) -> dict[str, float]:
        # repr() keeps every digit of the float, so each replica reads back the same time.
        wanted = {relpath: repr(time) for relpath, time in seen.items()}
        held = self.claim(FIRST_SEEN + series_relpath, wanted)
        return {relpath: float(held[relpath]) for relpath in seen}


def align_claims(db: sqlite3.Connection, shared: SharedClaims | None) -> None:
    """Bring an index whose slugs came from the other kind of claims into line, once.

    To shared claims (``[cluster] database`` newly set): the index's own claims are
    offered to the host (the first replica to arrive keeps its slugs; a slug another
    replica claimed first goes to that replica's series here too), then every series
    and chapter slug is given again against the host's claims, and every chapter
    takes the first-seen time the host holds for it (the first replica's).

    Back to the index's own: the slugs in use become its claims, so no newcomer is
    handed one of them.
    """
    kind = "shared" if shared is not None else "index"
    row = db.execute("SELECT value FROM meta WHERE key = 'claims'").fetchone()
    if (row[0] if row else "index") == kind:
        return
    db.execute("BEGIN")
    if shared is None:
        db.execute(
            "INSERT OR IGNORE INTO slug_claims(scope, slug, relpath) "
            "SELECT ?, slug, relpath FROM series WHERE slug IS NOT NULL",
            (SERIES_SCOPE,),
        )
        db.execute(
            "INSERT OR IGNORE INTO slug_claims(scope, slug, relpath) "
            "SELECT '/' || s.relpath, c.slug, c.relpath FROM chapters c "
            "JOIN series s ON s.id = c.series_id WHERE c.slug IS NOT NULL"
        )
    else:
        own: dict[str, dict[str, str]] = {}
        for scope, slug, relpath in db.execute("SELECT scope, slug, relpath FROM slug_claims"):
            own.setdefault(scope, {})[slug] = relpath
        for scope, claims in sorted(own.items()):
            shared.claim(scope, claims)
        # Offered, and from now on the host's: kept here they would go stale.
        db.execute("DELETE FROM slug_claims")
        series = db.execute("SELECT id, relpath, base_slug, slug FROM series").fetchall()
        _store_slugs(db, shared, "series", SERIES_SCOPE, series)
        for row in series:
            chapters = db.execute(
                "SELECT id, relpath, base_slug, slug, first_seen FROM chapters WHERE series_id = ?",
                (row["id"],),
            ).fetchall()
            assign_chapter_slugs(db, shared, row["relpath"], chapters)
            seen = {chapter["relpath"]: chapter["first_seen"] for chapter in chapters}
            first = shared.first_seen(row["relpath"], seen)
            db.executemany(
                "UPDATE chapters SET first_seen = ?, date = coalesce(released, ?) WHERE relpath = ?",
                [(time, time, relpath) for relpath, time in first.items()],
            )
        # The series' own times follow their chapters', as aggregate_series sets them.
        db.execute(
            "UPDATE series SET "
            "created_at = (SELECT min(first_seen) FROM chapters WHERE series_id = series.id), "
            "updated_at = (SELECT max(first_seen) FROM chapters WHERE series_id = series.id), "
            "latest_at = (SELECT max(date) FROM chapters WHERE series_id = series.id)"
        )
    db.execute("INSERT OR REPLACE INTO meta VALUES('claims', ?)", (kind,))
    db.execute("COMMIT")


def assign_series_slugs(db: sqlite3.Connection, claims: LibraryClaims) -> None:
    """Give each new series its slug (a series keeps its slug: its base never changes)."""
    rows = db.execute(
        "SELECT id, relpath, base_slug, slug FROM series WHERE slug IS NULL"
    ).fetchall()
    _store_slugs(db, claims, "series", SERIES_SCOPE, rows)


def assign_chapter_slugs(
    db: sqlite3.Connection, claims: LibraryClaims, series_relpath: str, rows: list[sqlite3.Row]
) -> None:
    """Give the chapters of one series (all of its rows) their slugs."""
    _store_slugs(db, claims, "chapters", "/" + series_relpath, rows)


def new_chapter_slugs(
    claims: LibraryClaims, series_relpath: str, records: list[dict[str, Any]]
) -> dict[str, str]:
    """``relpath -> slug`` for the chapter records of a series the index has no row of,
    claimed: written with the rows, they need no update when the series is rebuilt."""
    items = [(record["relpath"], record["base_slug"]) for record in records]
    return claimed_slugs(claims, "/" + series_relpath, items)


def claimed_slugs(
    claims: LibraryClaims, scope: str, items: list[tuple[str, str]]
) -> dict[str, str]:
    """``relpath -> slug`` for ``(relpath, base_slug)`` items, every new slug claimed.

    When another replica claimed one of the slugs meanwhile, the assignment is made
    again against the claims as they now stand; each round the claims only grow,
    so this ends, and every replica ends with the slugs the shared claims give.
    """
    held = claims.held(scope)
    while True:
        wanted = assign(items, held)
        new = {slug: relpath for relpath, slug in wanted.items() if slug not in held}
        if not new:
            return wanted
        held = {**held, **claims.claim(scope, new)}  # a claim, once made, stays
        if all(held.get(slug) == relpath for slug, relpath in new.items()):
            return wanted


def _store_slugs(
    db: sqlite3.Connection,
    claims: LibraryClaims,
    table: Literal["series", "chapters"],
    scope: str,
    rows: list[sqlite3.Row],
) -> None:
    """Rows need ``id``, ``relpath``, ``base_slug`` and ``slug``; ``table`` is never user input."""
    if not rows:
        return
    wanted = claimed_slugs(claims, scope, [(row["relpath"], row["base_slug"]) for row in rows])
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
