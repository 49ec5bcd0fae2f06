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

Whether the host has readers at all is asked by every request of the faces
that serve readers, and changes rarely: the answer is remembered for
:data:`READERS_SECONDS`, and forgotten at once when this host's readers change
(the core's cache generation :data:`READERS` is bumped), and with ``[cluster]
redis`` on every replica (they follow the shared generations, which the
``readers`` commands raise too). Without Redis, a change made by a command in
another process is seen within those seconds.
"""

import asyncio

from cachetools import TTLCache

from toshokan.core.access import AttemptGate
from toshokan.core.cache import ResultCache
from toshokan.core.progress.store import IMPLICIT_READER
from toshokan.core.readers.accounts import KEY_PREFIX, Readers, matches
from toshokan.core.signing import credential_key
from toshokan.errors import InvalidCredentials

#: Seconds a successful check is remembered, and how many are.
REMEMBER_SECONDS = 300
REMEMBERED = 4096
#: The generation (a name no source can have) every change of the readers bumps.
READERS = "_readers"
#: Seconds the answer to "has the host readers?" is remembered.
READERS_SECONDS = 2.0


class ReaderGate:
    def __init__(self, readers: Readers, attempts: AttemptGate, secret: bytes, cache: ResultCache):
        self.readers = readers
        self.attempts = attempts
        self.secret = secret
        self.cache = cache
        self._checked: TTLCache[str, str] = TTLCache(REMEMBERED, REMEMBER_SECONDS)
        #: Whether the host has readers, and until when (the loop's clock) that is remembered.
        self._any: tuple[bool, float] | None = None
        #: Changes of the readers seen so far: an answer asked across one is not remembered.
        self._changes = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        readers.on_change(self._readers_changed)
        cache.on_invalidate(self._invalidated)

    def _readers_changed(self) -> None:
        """The readers changed here: announced on the loop that serves (a change made in a
        worker thread is handed to it, before that thread's own result), and so to every
        replica through the shared generations."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            loop = self._loop
            if loop is not None and loop.is_running():
                loop.call_soon_threadsafe(self.cache.invalidate, READERS)
                return
        self.cache.invalidate(READERS)

    def _invalidated(self, generation: str) -> None:
        if generation == READERS:
            self._any = None
            self._changes += 1

    async def any_readers(self) -> bool:
        """Whether the host has readers (with none it is open), as remembered."""
        loop = self._loop = asyncio.get_running_loop()
        remembered = self._any
        if remembered is not None and remembered[1] > loop.time():
            return remembered[0]
        changes = self._changes
        found = await asyncio.to_thread(self.readers.any)
        if changes == self._changes:
            self._any = (found, loop.time() + READERS_SECONDS)
        return found

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
        if not await self.any_readers():
            return IMPLICIT_READER
        expected = await asyncio.to_thread(self._expected_hash, kind, name, secret)
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
