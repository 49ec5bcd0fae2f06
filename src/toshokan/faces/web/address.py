"""Where a person opens the reader, as ``toshokan serve`` prints it at start-up."""

from toshokan.config import HostSettings
from toshokan.faces.web.routes import READER_PATH

#: Listening on every interface: the machine itself is the address that surely answers.
WILDCARDS = {"", "0.0.0.0", "::", "[::]"}


def reader_address(settings: HostSettings) -> str:
    """The reader's URL: under ``public_url`` when set, else at the listen address."""
    if settings.host.public_url:
        return settings.host.public_url.rstrip("/") + READER_PATH
    server = settings.server
    scheme = "https" if server.tls_cert else "http"
    host = "localhost" if server.host in WILDCARDS else server.host
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{scheme}://{host}:{server.port}{READER_PATH}"
