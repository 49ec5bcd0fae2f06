"""Kept copies tied to their originals: each kept series' folder, and each kept chapter's
file, KOReader id and (once the library indexed it) local slugs, by upstream chapter.

The tables :mod:`toshokan.core.database.sqlite` creates in SQLite; see
:mod:`toshokan.core.keeping.ties`.

Revision ID: 0003
Revises: 0002
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

TABLES = (
    """CREATE TABLE kept_series(
        source TEXT NOT NULL,
        manga TEXT NOT NULL,
        library TEXT NOT NULL,
        folder TEXT NOT NULL,
        kept DOUBLE PRECISION NOT NULL,
        PRIMARY KEY(source, manga)
    )""",
    "CREATE UNIQUE INDEX kept_series_folder ON kept_series(library, folder)",
    """CREATE TABLE kept_chapters(
        source TEXT NOT NULL,
        manga TEXT NOT NULL,
        chapter TEXT NOT NULL,
        library TEXT NOT NULL,
        path TEXT NOT NULL,
        document TEXT NOT NULL,
        local_manga TEXT NOT NULL,
        local_chapter TEXT NOT NULL,
        pages INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        kept DOUBLE PRECISION NOT NULL,
        PRIMARY KEY(source, manga, chapter)
    )""",
    "CREATE UNIQUE INDEX kept_chapters_path ON kept_chapters(library, path)",
    "CREATE INDEX kept_chapters_local ON kept_chapters(library, local_manga, local_chapter)",
)


def upgrade() -> None:
    for statement in TABLES:
        op.execute(statement)


def downgrade() -> None:
    for table in ("kept_chapters", "kept_series"):
        op.execute(f"DROP TABLE {table}")
