"""The sources' claims (slugs, first-seen times) in the host's shared database."""

from collections.abc import Mapping

from toshokan.core.database import Database


class DatabaseClaims:
    """:class:`toshokan.sdk.Claims` in the ``claims`` table (``[cluster] database``).

    A claim is an insert that does nothing when the key is held: of two replicas
    claiming one key at once, the database lets exactly one row in, and both
    read back the same value.
    """

    def __init__(self, database: Database):
        self.database = database

    def held(self, source: str, scope: str) -> dict[str, str]:
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT key, value FROM claims WHERE source = ? AND scope = ?", (source, scope)
            )
            return dict(cursor.fetchall())

    def claim(self, source: str, scope: str, wanted: Mapping[str, str]) -> dict[str, str]:
        with self.database.transaction() as cursor:
            for key, value in sorted(wanted.items()):
                cursor.execute(
                    "INSERT INTO claims(source, scope, key, value) VALUES(?, ?, ?, ?) "
                    "ON CONFLICT(source, scope, key) DO NOTHING",
                    (source, scope, key, value),
                )
            cursor.execute(
                "SELECT key, value FROM claims WHERE source = ? AND scope = ?", (source, scope)
            )
            return dict(cursor.fetchall())

    def close(self) -> None:
        self.database.close()
