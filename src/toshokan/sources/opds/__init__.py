"""The OPDS source adapter (entry point ``opds``): another server's catalogue as a source.

Modules, one idea each: :mod:`.settings` (one catalogue's table),
:mod:`.feed` (one model of a catalogue page), :mod:`.atom` and :mod:`.opds2`
(the two formats read into it), :mod:`.catalogue` (fetching, leniency,
errors), :mod:`.discovery` (shelves, browse, search and sorts from the root),
:mod:`.refs` (slugs), :mod:`.links` (signed links to images), :mod:`.mapping`
(spec objects), :mod:`.archives` (downloaded books) and :mod:`.source`.
"""

from toshokan.sources.opds.settings import Settings
from toshokan.sources.opds.source import Opds

__all__ = ["Opds", "Settings"]
