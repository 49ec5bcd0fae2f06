"""The follows' tables, the same on both engines: who follows what, what the checks found,
the batches of checks, and where news is announced.

Kept apart from :mod:`.sqlite`, which creates them in place, and from the PostgreSQL
migration that adds them (``0004``), so both read the one definition.
"""

TABLES = (
    """CREATE TABLE IF NOT EXISTS follows(
        reader TEXT NOT NULL,
        source TEXT NOT NULL,
        manga TEXT NOT NULL,
        since DOUBLE PRECISION NOT NULL,
        PRIMARY KEY(reader, source, manga)
    )""",
    "CREATE INDEX IF NOT EXISTS follows_series ON follows(source, manga)",
    """CREATE TABLE IF NOT EXISTS followed_series(
        source TEXT NOT NULL,
        manga TEXT NOT NULL,
        title TEXT NOT NULL,
        publication TEXT NOT NULL,
        state TEXT NOT NULL,
        next_check DOUBLE PRECISION NOT NULL,
        last_check DOUBLE PRECISION,
        last_change DOUBLE PRECISION,
        full_check DOUBLE PRECISION,
        mark TEXT,
        failures INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        lease TEXT,
        lease_until DOUBLE PRECISION,
        PRIMARY KEY(source, manga)
    )""",
    "CREATE INDEX IF NOT EXISTS followed_series_due ON followed_series(next_check)",
    """CREATE TABLE IF NOT EXISTS series_chapters(
        source TEXT NOT NULL,
        manga TEXT NOT NULL,
        chapter TEXT NOT NULL,
        title TEXT NOT NULL,
        number DOUBLE PRECISION NOT NULL,
        language TEXT NOT NULL,
        scanlator TEXT NOT NULL,
        date DOUBLE PRECISION NOT NULL,
        pages INTEGER,
        found DOUBLE PRECISION NOT NULL,
        kind TEXT NOT NULL,
        batch TEXT,
        removed DOUBLE PRECISION,
        PRIMARY KEY(source, manga, chapter)
    )""",
    "CREATE INDEX IF NOT EXISTS series_chapters_found ON series_chapters(found)",
    "CREATE INDEX IF NOT EXISTS series_chapters_batch ON series_chapters(batch)",
    """CREATE TABLE IF NOT EXISTS check_batches(
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        started DOUBLE PRECISION NOT NULL,
        pending INTEGER NOT NULL,
        sealed INTEGER NOT NULL,
        finished DOUBLE PRECISION,
        checked INTEGER NOT NULL,
        found INTEGER NOT NULL,
        failed INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS notify_targets(
        id TEXT PRIMARY KEY,
        reader TEXT NOT NULL,
        digest TEXT NOT NULL,
        sealed TEXT NOT NULL,
        shown TEXT NOT NULL,
        series TEXT NOT NULL,
        created DOUBLE PRECISION NOT NULL,
        failures INTEGER NOT NULL DEFAULT 0,
        failing_since DOUBLE PRECISION,
        error TEXT,
        delivered DOUBLE PRECISION
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS notify_targets_digest ON notify_targets(reader, digest)",
)

#: Every table above, for a reader's removal and the tests' emptying.
NAMES = ("follows", "followed_series", "series_chapters", "check_batches", "notify_targets")
