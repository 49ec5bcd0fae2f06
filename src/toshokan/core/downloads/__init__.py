"""The download queue: chapters of followed series a reader keeps, kept in the local library.

:class:`Downloads` is what faces and commands call; :mod:`.runner` holds its jobs on
the core's job engine, :mod:`.store` its tables, :mod:`.choose` which chapters a
reader's filters ask for. Keeping one chapter is :class:`toshokan.core.keeping.Keeper`'s.
"""

from toshokan.core.downloads.service import ACTIONS, MOVES, Downloads, Listing
from toshokan.core.downloads.store import Download, Keep, QueueState

__all__ = ["ACTIONS", "MOVES", "Download", "Downloads", "Keep", "Listing", "QueueState"]
