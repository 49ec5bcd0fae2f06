"""The download queue: which reader keeps which followed series and how, the chapters queued
to be kept, and the queue's own state (paused, and why).

The tables are those SQLite gets in place (:mod:`toshokan.core.database.downloads_schema`).

Revision ID: 0005
Revises: 0004
"""

from alembic import op

from toshokan.core.database.downloads_schema import NAMES, TABLES

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for statement in TABLES:
        op.execute(statement)


def downgrade() -> None:
    for table in reversed(NAMES):
        op.execute(f"DROP TABLE {table}")
