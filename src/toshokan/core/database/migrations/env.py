"""Alembic's environment for the host's PostgreSQL schema.

Run only by :func:`toshokan.core.database.postgres.migrate`, which hands over
the connection it holds the migration lock on; there is no ``alembic.ini`` and
no SQLAlchemy model: each migration is plain SQL (``op.execute``).
"""

import logging
from collections.abc import Collection, Mapping
from typing import Any

from alembic import context
from alembic.migration import MigrationContext, MigrationInfo

log = logging.getLogger("toshokan.database")


def applied(
    ctx: MigrationContext, step: MigrationInfo, heads: Collection[Any], run_args: Mapping[str, Any]
) -> None:
    log.info("database schema: migration %s applied", step.up_revision_id)


context.configure(
    connection=context.config.attributes["connection"],
    target_metadata=None,
    transaction_per_migration=True,
    on_version_apply=applied,
)
with context.begin_transaction():
    context.run_migrations()
