"""The local library's SQLite index: every SQL statement of the source lives in this package.

- :mod:`.database`: the schema, connections (one writer, a reader per thread)
  and the reads details, chapters and pages need;
- :mod:`.update`: applying one scan's findings (chapters added, changed, gone);
- :mod:`.series_rows`: series rows rebuilt from their chapters, with their
  search terms and full-text row;
- :mod:`.slug_rows`: slugs and their permanent claims;
- :mod:`.search`: search requests as SQL.

The rest of the source (reading the disk, serving pages, the source class)
asks this package and writes no SQL of its own.
"""

from toshokan.sources.local.index.database import (
    Index,
    IndexUnavailable,
    Snapshot,
    connect,
    loads,
    now,
)
from toshokan.sources.local.index.ownership import IndexLock, default_index_path, host_identity

__all__ = [
    "Index",
    "IndexLock",
    "IndexUnavailable",
    "Snapshot",
    "connect",
    "default_index_path",
    "host_identity",
    "loads",
    "now",
]
