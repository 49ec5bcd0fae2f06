"""Where a person opens the reader, as ``toshokan serve`` prints it at start-up."""

from toshokan.config import HostSettings
from toshokan.core import Urls
from toshokan.core.hosted import listen_url


def reader_address(settings: HostSettings) -> str:
    """The reader's URL: under ``public_url`` when set, else at the listen address."""
    return Urls(settings.host.public_url or listen_url(settings)).face("")
