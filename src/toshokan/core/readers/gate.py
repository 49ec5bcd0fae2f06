"""Telling who is reading: a reader's name and secret checked, failures counted, successes remembered.

argon2 takes tens of milliseconds and much memory on purpose, so a reader's
every page turn must not pay it: a success is remembered for a few minutes,
keyed by a digest of the credentials (never the credentials), next to the hash
it was checked against. Each request still reads the reader's stored hashes
(one indexed query), so a removed reader or a changed password takes effect at
once, even when the command that did it ran in another process.

Failures count against the attempt budget the sources' authentication uses
(``[limits] auth_attempts`` per client address a minute), and the check itself
runs in a worker thread, off the event loop.
"""

import asyncio

from cachetools import TTLCache

from toshokan.core.access import AttemptGate
from toshokan.core.progress.store import IMPLICIT_READER
from toshokan.core.readers.accounts import KEY_PREFIX, Readers, matches
from toshokan.core.signing import credential_key
from toshokan.errors import InvalidCredentials

#: Seconds a successful check is remembered, and how many are.
REMEMBER_SECONDS = 300
REMEMBERED = 4096


class ReaderGate:
    def __init__(self, readers: Readers, attempts: AttemptGate, secret: bytes):
        self.readers = readers
        self.attempts = attempts
        self.secret = secret
        self._checked: TTLCache[str, str] = TTLCache(REMEMBERED, REMEMBER_SECONDS)

    async def koreader(self, name: str, userkey: str, client: str) -> str:
        """The reader KOReader's ``x-auth-user``/``x-auth-key`` name (MD5 of the password).

        With no readers the host is open: anyone is the implicit reader.
        """
        return await self._identify("koreader", name, userkey, client)

    async def basic(self, name: str, secret: str, client: str) -> str:
        """The reader signing in with a name and a password or one of their API keys."""
        return await self._identify("basic", name, secret, client)

    async def register_koreader(self, name: str, userkey: str) -> None:
        """KOReader's Register button: a reader known by KOReader's key (when the host allows it)."""
        await asyncio.to_thread(self.readers.register_koreader, name, userkey)

    async def api_key(self, key: str, client: str) -> str:
        """The reader whose API key ``key`` is, sent alone (``X-API-Key``): the key names them."""
        return await self._identify("api_key", "", key, client)

    async def _identify(self, kind: str, name: str, secret: str, client: str) -> str:
        any_readers, expected = await asyncio.to_thread(self._look_up, kind, name, secret)
        if not any_readers:
            return IMPLICIT_READER
        key = f"{client}:readers"
        await self.attempts.refuse_if_over(key)
        digest = credential_key(self.secret, {"kind": kind, "name": name, "secret": secret})
        if expected is not None and self._checked.get(digest) == expected[1]:
            return expected[0]

        async def attempt() -> None:
            if expected is None or not await asyncio.to_thread(
                matches, self.readers.hasher, expected[1], expected[2]
            ):
                raise InvalidCredentials("Unknown reader or wrong password.")

        await self.attempts.check(key, attempt)
        assert expected is not None  # attempt raised otherwise
        self._checked[digest] = expected[1]
        return expected[0]

    def _look_up(
        self, kind: str, name: str, secret: str
    ) -> tuple[bool, tuple[str, str, str] | None]:
        """Whether the host has readers, and whose stored hash to check ``secret`` against."""
        return self.readers.any(), self._expected_hash(kind, name, secret)

    def _expected_hash(self, kind: str, name: str, secret: str) -> tuple[str, str, str] | None:
        """The reader, their stored hash and the secret to check against it."""
        if kind == "api_key":
            return self.readers.key_owner(secret)
        stored = self.readers.stored(name)
        if stored is None:
            return None
        if kind == "koreader":
            return None if stored.koreader_hash is None else (name, stored.koreader_hash, secret)
        if secret.startswith(f"{KEY_PREFIX}_"):
            owned = self.readers.key_owner(secret)
            return owned if owned is not None and owned[0] == name else None
        return None if stored.password_hash is None else (name, stored.password_hash, secret)
