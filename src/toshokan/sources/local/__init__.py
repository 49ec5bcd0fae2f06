"""The local library source: comics and manga from a folder on disk.

``LocalLibrary`` is the adapter (entry point ``local``); ``write_demo_library``
writes the sample library the host uses when the default folder is missing.
"""

from typing import TYPE_CHECKING

from toshokan.sdk.lazy import lazy_names

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


__getattr__ = lazy_names(__name__, _MODULES)
