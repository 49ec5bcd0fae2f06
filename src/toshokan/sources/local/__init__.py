"""The local library source: comics and manga from a folder on disk.

``LocalLibrary`` is the adapter (entry point ``local``); ``write_demo_library``
writes the sample library the host uses when the default folder is missing.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toshokan.sources.local.demo import write_demo_library
    from toshokan.sources.local.settings import LocalSettings
    from toshokan.sources.local.source import LocalLibrary

__all__ = ["LocalLibrary", "LocalSettings", "write_demo_library"]

_MODULES = {
    "LocalLibrary": "toshokan.sources.local.source",
    "LocalSettings": "toshokan.sources.local.settings",
    "write_demo_library": "toshokan.sources.local.demo",
}


def __getattr__(name: str) -> Any:
    # Imported when first asked for: a scan's reading process imports this package for
    # its own modules and needs none of these (the adapter, the sample library's
    # drawing), which cost it a fifth of a second of CPU to import.
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULES[name]), name)
    globals()[name] = value
    return value
