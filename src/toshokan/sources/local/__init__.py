"""The local library source: comics and manga from a folder on disk.

``LocalLibrary`` is the adapter (entry point ``local``); ``write_demo_library``
writes the sample library the host uses when the default folder is missing.
"""

from toshokan.sources.local.demo import write_demo_library
from toshokan.sources.local.settings import LocalSettings
from toshokan.sources.local.source import LocalLibrary

__all__ = ["LocalLibrary", "LocalSettings", "write_demo_library"]
