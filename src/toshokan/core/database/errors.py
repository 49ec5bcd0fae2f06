"""What goes wrong with the host's database, apart from the backends that raise it (they are
imported only when configured, and import this)."""

from toshokan.errors import UpstreamError


class DatabaseUnavailable(Exception):
    """The configured database cannot be used; the message names it and says why, in one line."""


class DatabaseDown(UpstreamError):
    """The shared database stopped answering while the host runs: a 502 for this request
    (the database is the host's own upstream), never a 500, and the next one tries again."""

    default_message = "The host's database did not answer; try again shortly."
