"""Readers, their keys, their progress, and the sources' claims.

The readers' tables are those :mod:`toshokan.core.database.sqlite` creates in
SQLite; ``claims`` holds what each local library keeps in its own index when no
database is shared (slugs and who holds them, when a chapter was first seen),
under the library's source slug.

Revision ID: 0001
Revises:
"""

from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TABLES = (
    """CREATE TABLE readers(
        name TEXT PRIMARY KEY,
        password_hash TEXT,
        koreader_hash TEXT,
        created DOUBLE PRECISION NOT NULL
    )""",
    """CREATE TABLE reader_keys(
        key_id TEXT PRIMARY KEY,
        reader TEXT NOT NULL,
        key_hash TEXT NOT NULL,
        created DOUBLE PRECISION NOT NULL
    )""",
    "CREATE INDEX reader_keys_reader ON reader_keys(reader)",
    """CREATE TABLE progress(
        reader TEXT NOT NULL,
        source TEXT NOT NULL,
        manga TEXT NOT NULL,
        chapter TEXT NOT NULL,
        page INTEGER NOT NULL,
        pages INTEGER NOT NULL,
        finished INTEGER NOT NULL,
        updated DOUBLE PRECISION NOT NULL,
        device_id TEXT NOT NULL,
        device TEXT NOT NULL,
        inferred INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY(reader, source, manga, chapter)
    )""",
    "CREATE INDEX progress_recent ON progress(reader, updated)",
    """CREATE TABLE document_progress(
        reader TEXT NOT NULL,
        document TEXT NOT NULL,
        progress TEXT NOT NULL,
        percentage DOUBLE PRECISION NOT NULL,
        updated DOUBLE PRECISION NOT NULL,
        device_id TEXT NOT NULL,
        device TEXT NOT NULL,
        PRIMARY KEY(reader, document)
    )""",
    """CREATE TABLE claims(
        source TEXT NOT NULL,
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY(source, scope, key)
    )""",
)


def upgrade() -> None:
    for statement in TABLES:
        op.execute(statement)


def downgrade() -> None:
    for table in ("claims", "document_progress", "progress", "reader_keys", "readers"):
        op.execute(f"DROP TABLE {table}")
