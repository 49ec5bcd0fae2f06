"""The download queue's tables, the same on both engines: which reader keeps which series
(and how), the chapters queued to be kept, and the queue's own state.

Kept apart from :mod:`.sqlite`, which creates them in place, and from the PostgreSQL
migration that adds them (``0005``), so both read the one definition.
"""

TABLES = (
    """CREATE TABLE IF NOT EXISTS keeps(
        reader TEXT NOT NULL,
        source TEXT NOT NULL,
        manga TEXT NOT NULL,
        languages TEXT NOT NULL,
        groups TEXT NOT NULL,
        backfill INTEGER NOT NULL,
        only_unread INTEGER NOT NULL,
        since DOUBLE PRECISION NOT NULL,
        PRIMARY KEY(reader, source, manga)
    )""",
    "CREATE INDEX IF NOT EXISTS keeps_series ON keeps(source, manga)",
    """CREATE TABLE IF NOT EXISTS downloads(
        id TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        manga TEXT NOT NULL,
        chapter TEXT NOT NULL,
        series_title TEXT NOT NULL,
        title TEXT NOT NULL,
        number DOUBLE PRECISION NOT NULL,
        language TEXT NOT NULL,
        scanlator TEXT NOT NULL,
        state TEXT NOT NULL,
        position DOUBLE PRECISION NOT NULL,
        attempts INTEGER NOT NULL,
        next_try DOUBLE PRECISION NOT NULL,
        reason TEXT,
        error TEXT,
        lease TEXT,
        lease_until DOUBLE PRECISION,
        pages INTEGER,
        pages_done INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        path TEXT,
        added DOUBLE PRECISION NOT NULL,
        finished DOUBLE PRECISION
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS downloads_chapter ON downloads(source, manga, chapter)",
    "CREATE INDEX IF NOT EXISTS downloads_queue ON downloads(state, position)",
    """CREATE TABLE IF NOT EXISTS download_queue(
        id TEXT PRIMARY KEY,
        paused TEXT,
        message TEXT,
        since DOUBLE PRECISION
    )""",
)

#: Every table above, for the tests' emptying.
NAMES = ("keeps", "downloads", "download_queue")
