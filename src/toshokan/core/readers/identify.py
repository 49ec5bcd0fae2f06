"""Who reads, told from a request's headers the way OPDS and Komga clients send them.

Those clients know two ways: HTTP Basic (the reader's name and their password
or one of their API keys) and an API key alone in ``X-API-Key`` (the key's id
names its reader). Wrong credentials are counted by :class:`ReaderGate` on the
attempt budget; none at all are refused without counting, because every such
client first asks without them and signs in only when refused.

A source that accepts the host's readers (``auth = "readers"``) is opened by
:func:`host_reader`: those two ways, or the session cookie a face that signs
browsers and apps in has set, and never by the implicit reader of a host
without readers.
"""

import asyncio
from collections.abc import Mapping

from starlette.requests import cookie_parser

from toshokan.core.credentials import basic_credentials
from toshokan.core.progress.store import IMPLICIT_READER
from toshokan.core.readers.gate import ReaderGate
from toshokan.core.readers.sessions import SESSION_COOKIE, Sessions
from toshokan.errors import InvalidCredentials

API_KEY_HEADER = "x-api-key"
READERS_ONLY = "This source is open to the host's readers: sign in as one of them."


async def reader_of_headers(gate: ReaderGate, headers: Mapping[str, str], client: str) -> str:
    """The reader these headers sign in as; with no readers on the host, the implicit reader.

    Raises ``InvalidCredentials`` when the host has readers and the headers name
    none of them, and ``RateLimited`` once ``client`` has guessed too often.
    """
    basic = basic_credentials(headers)
    if basic is not None:
        return await gate.basic(*basic, client)
    key = headers.get(API_KEY_HEADER)
    if key:
        return await gate.api_key(key, client)
    if not await asyncio.to_thread(gate.readers.any):
        return IMPLICIT_READER
    raise InvalidCredentials("Sign in as one of this host's readers.")


async def any_reader(gate: ReaderGate, headers: Mapping[str, str], client: str) -> str:
    """The reader these headers sign in as, by the host's session cookie, Basic or
    ``X-API-Key``; with no readers on the host, the implicit reader. For the host's own JSON
    endpoints, which a browser (the web reader) and any other client call alike."""
    if basic_credentials(headers) is None and not headers.get(API_KEY_HEADER):
        token = cookie_parser(headers.get("cookie", "")).get(SESSION_COOKIE)
        if token:
            reader = await Sessions(gate).reader(token)
            if reader is not None:
                return reader
    return await reader_of_headers(gate, headers, client)


async def host_reader(gate: ReaderGate, headers: Mapping[str, str], client: str) -> str:
    """The reader these headers sign in as, by Basic, ``X-API-Key`` or the host's session
    cookie; ``InvalidCredentials`` for anyone else, the implicit reader included (a host
    without readers has no one to open such a source to)."""
    if basic_credentials(headers) is None and not headers.get(API_KEY_HEADER):
        token = cookie_parser(headers.get("cookie", "")).get(SESSION_COOKIE)
        reader = await Sessions(gate).reader(token) if token else None
        if reader is None:
            raise InvalidCredentials(READERS_ONLY)
        return reader
    reader = await reader_of_headers(gate, headers, client)
    if reader == IMPLICIT_READER:
        raise InvalidCredentials(READERS_ONLY)
    return reader
