"""The stores run on both engines: SQLite and PostgreSQL."""

from tests.databases import database_url, module_database_url, postgres_server

__all__ = ["database_url", "module_database_url", "postgres_server"]
