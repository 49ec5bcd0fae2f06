"""Alembic's environment for the host's PostgreSQL schema.

Run only by :func:`toshokan.core.database.postgres.migrate`, which hands over
the connection it holds the migration lock on; there is no ``alembic.ini`` and
no SQLAlchemy model: each migration is plain SQL (``op.execute``).
"""

from alembic import context

context.configure(
    connection=context.config.attributes["connection"],
    target_metadata=None,
    transaction_per_migration=True,
)
with context.begin_transaction():
    context.run_migrations()
