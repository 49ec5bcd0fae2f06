"""Who reads, told from a request's headers the way OPDS and Komga clients send them.

Those clients know two ways: HTTP Basic (the reader's name and their password
or one of their API keys) and an API key alone in ``X-API-Key`` (the key's id
names its reader). Wrong credentials are counted by :class:`ReaderGate` on the
attempt budget; none at all are refused without counting, because every such
client first asks without them and signs in only when refused.
"""

import asyncio
from collections.abc import Mapping

from toshokan.core.credentials import basic_credentials
from toshokan.core.progress.store import IMPLICIT_READER
from toshokan.core.readers.gate import ReaderGate
from toshokan.errors import InvalidCredentials

API_KEY_HEADER = "x-api-key"


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
