"""Follows, what their checks found, and the job queue that runs the checks.

The follows' tables are those SQLite gets in place
(:mod:`toshokan.core.database.follows_schema`). The job queue is procrastinate's
own schema, as the installed procrastinate ships it: procrastinate leaves
applying its SQL to the application's migration tool. pyproject.toml holds
procrastinate to the minor version whose schema this is; a newer one whose
package brings migrations past :data:`PROCRASTINATE_SCHEMA` needs a migration
that applies them (a test compares the two).

Revision ID: 0004
Revises: 0003
"""

from alembic import op

from toshokan.core.database.follows_schema import TABLES

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

#: The newest of procrastinate's own migrations that its schema, applied here, includes.
PROCRASTINATE_SCHEMA = "03.04.00_50_post_add_retry_failed_job_procedure.sql"


def upgrade() -> None:
    from procrastinate.schema import SchemaManager

    for statement in TABLES:
        op.execute(statement)
    # Straight to the driver (its colons are no bind parameters), percent signs escaped as
    # procrastinate's own SchemaManager.apply_schema does.
    op.get_bind().exec_driver_sql(SchemaManager.get_schema().replace("%", "%%"))


def downgrade() -> None:
    for table in ("notify_targets", "check_batches", "series_chapters", "followed_series"):
        op.execute(f"DROP TABLE {table}")
    op.execute("DROP TABLE follows")
