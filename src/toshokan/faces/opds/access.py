"""HTTP Basic, the one authentication every OPDS reader can do, standing for a source's own.

Readers (Panels, Chunky, KOReader, ComicVerse...) answer a 401 carrying
``WWW-Authenticate: Basic`` by asking the user for a name and password and
sending them on every request of the catalogue, images included. The face
declares that way (:data:`PASSING`) and the core passes the pair on as the
headers the source's auth type expects (:class:`toshokan.core.passing.BasicAsSource`),
so it authorises an OPDS request exactly as it would the JSON interface's:

- ``basic``: the reader's ``Authorization: Basic`` header is already the one.
- ``api_key``, ``bearer``, ``cookie``: the password is the key, token or cookie.
- ``session``: the name and password are exchanged through the core's
  authenticate for the session's cookies, remembered briefly per credential
  in the core's cache (:data:`SESSIONS`), and with ``[cluster] redis`` in the
  host's shared secrets (encrypted with the host secret), so another process or
  replica reuses them rather than signing in again.
"""

from toshokan.core.cache import Kind
from toshokan.core.credentials import basic_challenge
from toshokan.core.passing import BasicAsSource
from toshokan.errors import InvalidCredentials
from toshokan.models import SourceConfiguration

#: The kind of the core's cache that keeps the session cookies readers' Basic pairs obtained.
SESSIONS = "opds-session"
#: Seconds a session's cookies are reused before the reader's name and password sign in again.
SESSION_SECONDS = 600
#: What the face keeps through the core's cache.
CACHED = {SESSIONS: Kind(ttl=SESSION_SECONDS)}
#: How the face's readers' credentials reach a source.
PASSING = BasicAsSource(sessions=SESSIONS, seconds=SESSION_SECONDS)


def challenge(config: SourceConfiguration, message: str | None = None) -> InvalidCredentials:
    return InvalidCredentials(
        message or f"{config.name} requires a name and password.",
        headers={"WWW-Authenticate": basic_challenge(config.name)},
    )
