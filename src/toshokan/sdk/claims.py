"""Slug claims the host keeps for its sources, so that every replica hands out the same slugs.

A source that names things after their titles meets collisions (``Re Zero`` and
``Re-Zero``); whichever name claimed a slug first keeps it for good, and the
other gets another. Kept per process, two replicas that saw the names arrive in
a different order would disagree; kept by the host in one shared database
(``[cluster] database``), the first claim anywhere holds everywhere.
"""

from collections.abc import Mapping
from typing import Protocol


class SlugClaims(Protocol):
    """Slugs each held for good by one key (a path, an id), in scopes of one source.

    The methods block (a database call); sources call them from a worker thread.
    """

    def held(self, source: str, scope: str) -> dict[str, str]:
        """Every claim in ``scope`` of ``source``: slug -> the key holding it."""
        ...

    def claim(self, source: str, scope: str, wanted: Mapping[str, str]) -> dict[str, str]:
        """Claim each slug of ``wanted`` (slug -> key) that nobody holds yet, at once; then
        every claim in the scope, so the caller sees which of its wishes stood."""
        ...

    def close(self) -> None: ...
