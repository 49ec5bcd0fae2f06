"""The MangaDex source adapter (entry point ``mangadex``).

Modules, one idea each: :mod:`.settings` (the operator's table),
:mod:`.api` (MangaDex parameters, limits and error bodies), :mod:`.mapping`
(payloads to spec objects), :mod:`.payloads` (the typed, bounded response
bodies), :mod:`.tags` with ``tags.json`` (tag slugs), :mod:`.feed` (the
bounded, concurrent chapter feed), :mod:`.limits` (process-wide rate
limits), :mod:`.commands` (``toshokan mangadex``)
and :mod:`.source` (the adapter itself).
"""

from toshokan.sources.mangadex.settings import Settings
from toshokan.sources.mangadex.source import MangaDex

__all__ = ["MangaDex", "Settings"]
