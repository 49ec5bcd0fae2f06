"""A place's share of the chapter as the client that wrote it sent it (OPDS and Readium
progressions), given back as sent: clients turn it into a page each their own way.

Revision ID: 0002
Revises: 0001
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE progress ADD COLUMN progression DOUBLE PRECISION")


def downgrade() -> None:
    op.execute("ALTER TABLE progress DROP COLUMN progression")
