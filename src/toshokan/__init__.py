"""toshokan: a content host that presents many sources in one JSON interface."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("toshokan")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"
