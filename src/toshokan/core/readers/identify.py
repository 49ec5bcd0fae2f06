"""Who reads, told from a request's headers the way OPDS and Komga clients send them.

Those clients know two ways: HTTP Basic (the reader's name and their password
or one of their API keys) and an API key alone in ``X-API-Key`` (the key's id
names its reader); a face whose clients keep a session cookie says so as data
(:class:`Signing`), and :func:`reader_by` tells the reader its way. Wrong credentials are counted by :class:`ReaderGate` on the
attempt budget; none at all are refused without counting, because every such
client first asks without them and signs in only when refused.

A source that accepts the host's readers (``auth = "readers"``) is opened by
:func:`host_reader`: those two ways, or the session cookie a face that signs
browsers and apps in has set, and never by the implicit reader of a host
without readers.
"""

from collections.abc import Mapping
from dataclasses import dataclass

from starlette.requests import cookie_parser

from toshokan.core.credentials import basic_credentials
from toshokan.core.progress.store import IMPLICIT_READER
from toshokan.core.readers.gate import ReaderGate
from toshokan.core.readers.sessions import SESSION_COOKIE, Sessions
from toshokan.errors import InvalidCredentials

API_KEY_HEADER = "x-api-key"
READERS_ONLY = "This source is open to the host's readers: sign in as one of them."


class NotAReader(InvalidCredentials):
    """The host has readers and the request names none of them."""


@dataclass(frozen=True)
class Signing:
    """How a face's clients say which reader they are, besides Basic and ``X-API-Key`` (which
    every face takes): the session cookie ``cookie`` names them when they send no credentials,
    and with ``sessions``, a Basic sign-in is given a new session (apps that keep the cookie)."""

    cookie: str | None = None
    sessions: bool = False


#: Basic or ``X-API-Key`` only (OPDS readers).
BY_CREDENTIALS = Signing()
#: The host's session cookie too (the host's own JSON endpoints, the web reader's calls).
BY_HOST_SESSION = Signing(SESSION_COOKIE)


async def reader_by(
    signing: Signing, gate: ReaderGate, headers: Mapping[str, str], client: str
) -> tuple[str, str | None]:
    """The reader the headers name ``signing``'s way, and a new session token when a Basic
    sign-in earns one. Raises :class:`NotAReader` when the host has readers and the headers
    name none of them, ``RateLimited`` once ``client`` has guessed too often."""
    basic, key = basic_credentials(headers), headers.get(API_KEY_HEADER)
    explicit = basic is not None or bool(key)
    token = None
    if signing.cookie is not None and (signing.sessions or not explicit):
        token = cookie_parser(headers.get("cookie", "")).get(signing.cookie)
    signed_in = await Sessions(gate).reader(token) if token else None
    if signed_in is not None and not explicit:
        return signed_in, None
    try:
        reader = await _named(gate, basic, key, client)
    except NotAReader:
        raise
    except InvalidCredentials as refused:
        raise NotAReader(refused.message, headers=refused.headers) from None
    if not signing.sessions or not reader or basic is None or reader == signed_in:
        return reader, None
    return reader, Sessions(gate).issue(reader)


async def _named(
    gate: ReaderGate, basic: tuple[str, str] | None, key: str | None, client: str
) -> str:
    """The reader a Basic pair or an API key names; with no readers on the host, the implicit
    reader. Raises ``InvalidCredentials`` when the host has readers and neither names one of
    them, ``RateLimited`` once ``client`` has guessed too often."""
    if basic is not None:
        return await gate.basic(*basic, client)
    if key:
        return await gate.api_key(key, client)
    if not await gate.any_readers():
        return IMPLICIT_READER
    raise NotAReader("Sign in as one of this host's readers.")


async def host_reader(gate: ReaderGate, headers: Mapping[str, str], client: str) -> str:
    """The reader these headers sign in as, by Basic, ``X-API-Key`` or the host's session
    cookie; ``InvalidCredentials`` for anyone else, the implicit reader included (a host
    without readers has no one to open such a source to)."""
    basic, key = basic_credentials(headers), headers.get(API_KEY_HEADER)
    if basic is None and not key:
        token = cookie_parser(headers.get("cookie", "")).get(SESSION_COOKIE)
        reader = await Sessions(gate).reader(token) if token else None
        if reader is None:
            raise InvalidCredentials(READERS_ONLY)
        return reader
    reader = await _named(gate, basic, key, client)
    if reader == IMPLICIT_READER:
        raise InvalidCredentials(READERS_ONLY)
    return reader
