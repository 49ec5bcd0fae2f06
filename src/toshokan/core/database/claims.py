"""The sources' slug claims in the host's shared database (``[cluster] database``)."""

from collections.abc import Mapping

from toshokan.core.database import Database


class DatabaseClaims:
    """:class:`toshokan.sdk.SlugClaims` in the ``slug_claims`` table.

    A claim is an insert that does nothing when the slug is held: of two replicas
    claiming one slug at once, the database lets exactly one row in, and both
    read back the same holder.
    """

    def __init__(self, database: Database):
        self.database = database

    def held(self, source: str, scope: str) -> dict[str, str]:
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT slug, relpath FROM slug_claims WHERE source = ? AND scope = ?",
                (source, scope),
            )
            return {slug: key for slug, key in cursor.fetchall()}

    def claim(self, source: str, scope: str, wanted: Mapping[str, str]) -> dict[str, str]:
        with self.database.transaction() as cursor:
            for slug, key in sorted(wanted.items()):
                cursor.execute(
                    "INSERT INTO slug_claims(source, scope, slug, relpath) VALUES(?, ?, ?, ?) "
                    "ON CONFLICT(source, scope, slug) DO NOTHING",
                    (source, scope, slug, key),
                )
            cursor.execute(
                "SELECT slug, relpath FROM slug_claims WHERE source = ? AND scope = ?",
                (source, scope),
            )
            return {slug: key for slug, key in cursor.fetchall()}

    def close(self) -> None:
        self.database.close()
