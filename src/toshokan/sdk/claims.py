"""Claims the host keeps for its sources, so that every replica hands out the same names and facts.

A source that names things after their titles meets collisions (``Re Zero`` and
``Re-Zero``); whichever name claimed a slug first keeps it for good, and the
other gets another. A source that dates what it finds by when it first saw it
must date it once. Kept per process, two replicas that saw things arrive in a
different order, or at different times, would disagree; kept by the host in one
shared database (``[cluster] database``), the first claim anywhere holds everywhere.
"""

from collections.abc import Mapping
from typing import Protocol


class Claims(Protocol):
    """Keys each held for good by the first value claimed for them, in scopes of one source
    (a slug held by a path; a path held by the time it was first seen).

    The methods block (a database call); sources call them from a worker thread.
    """

    def held(self, source: str, scope: str) -> dict[str, str]:
        """Every claim in ``scope`` of ``source``: key -> the value holding it."""
        ...

    def claim(self, source: str, scope: str, wanted: Mapping[str, str]) -> dict[str, str]:
        """Claim each key of ``wanted`` (key -> value) that nobody holds yet, at once; then
        every claim in the scope, so the caller sees which of its wishes stood."""
        ...

    def close(self) -> None: ...
