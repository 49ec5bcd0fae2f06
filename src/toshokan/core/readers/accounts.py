"""Reader accounts: names, passwords and API keys, stored only as argon2 hashes.

A reader signs in with a password or an API key (``tk_<id>_<secret>``; the id
finds the one hash to check, so a key is verified with one argon2 call however
many a reader has). KOReader never sends the password, only its MD5: an account
keeps an argon2 hash of that MD5's hex digest too (never the MD5 itself), so a
KOReader's key is checked without the host ever holding something that signs in.

argon2 is slow by design; these methods block, and :mod:`toshokan.core.readers.gate`
calls them from a worker thread and remembers its successes briefly.
"""

import hashlib
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from toshokan.core.database import Database
from toshokan.core.downloads.store import READER_ROW
from toshokan.core.follows.store import forget_reader

#: A reader's name: what KOReader's server accepts as a user name (no colon), bounded.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}")
KEY_PREFIX = "tk"
#: Shorter passwords are guessed in minutes by anyone who can reach the host (an empty one
#: opens every face to ``curl -u 'name:'``); the attempt budget slows guessing, not enough.
MIN_PASSWORD = 8
PASSWORD_RULE = f"a password is at least {MIN_PASSWORD} characters long and not the reader's name"
#: What goes with a reader, each table by what its rows are to a person: removing a reader
#: empties every one of them, and ``toshokan readers remove`` says how many of each it removes.
BELONGINGS = (
    ("reader_keys", "API key", "API keys"),
    ("progress", "chapter's place", "chapters' places"),
    ("document_progress", "KOReader document's place", "KOReader documents' places"),
    ("follows", "followed series", "followed series"),
    ("notify_targets", "notification target", "notification targets"),
)


class AccountError(Exception):
    """The account cannot be created or changed; the message says why."""


class ReaderExists(AccountError):
    """A reader with this name exists already."""


@dataclass(frozen=True)
class Account:
    name: str
    created: float
    keys: int
    has_password: bool


@dataclass(frozen=True)
class StoredCredentials:
    """The hashes a reader's sign-in is checked against."""

    password_hash: str | None
    koreader_hash: str | None


def koreader_key(password: str) -> str:
    """What KOReader sends as ``x-auth-key`` for ``password``: its MD5, in hex."""
    return hashlib.md5(password.encode()).hexdigest()


def check_name(name: str) -> str:
    if not NAME_PATTERN.fullmatch(name):
        raise AccountError(
            "a reader's name is 1 to 64 letters, digits or . _ @ + -, starting with a letter or digit"
        )
    return name


def check_password(name: str, password: str) -> str:
    """``password``, if it keeps :data:`PASSWORD_RULE`."""
    if len(password) < MIN_PASSWORD or password.strip().casefold() == name.casefold():
        raise AccountError(f"password refused: {PASSWORD_RULE}")
    return password


def matches(hasher: PasswordHasher, stored: str | None, secret: str) -> bool:
    if stored is None:
        return False
    try:
        return hasher.verify(stored, secret)
    except (VerificationError, InvalidHashError):
        return False


class Readers:
    """The accounts in the readers' database."""

    def __init__(self, database: Database, hasher: PasswordHasher | None = None):
        self.database = database
        self.hasher = hasher or PasswordHasher()
        self._changed: list[Callable[[], None]] = []

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` after every change of the readers or their credentials here."""
        self._changed.append(listener)

    def _change(self) -> None:
        for listener in self._changed:
            listener()

    def any(self) -> bool:
        """Whether the host has readers at all (with none it is open, as for one reader)."""
        with self.database.transaction() as cursor:
            cursor.execute("SELECT 1 FROM readers LIMIT 1")
            return cursor.fetchone() is not None

    def add(self, name: str, password: str) -> str:
        """Create a reader with ``password``; returns their first API key."""
        check_password(check_name(name), password)
        self._create(name, self.hasher.hash(password), password)
        return self.new_key(name)

    def register_koreader(self, name: str, userkey: str) -> None:
        """Create a reader known only by KOReader's key (its Register button): no password yet."""
        self._create(check_name(name), None, None, koreader_key_hash=self.hasher.hash(userkey))

    def _create(
        self,
        name: str,
        password_hash: str | None,
        password: str | None,
        koreader_key_hash: str | None = None,
    ) -> None:
        if password is not None:
            koreader_key_hash = self.hasher.hash(koreader_key(password))
        with self.database.transaction() as cursor:
            cursor.execute(
                "INSERT INTO readers(name, password_hash, koreader_hash, created) "
                "VALUES(?, ?, ?, ?) ON CONFLICT(name) DO NOTHING",
                (name, password_hash, koreader_key_hash, time.time()),
            )
            if cursor.rowcount == 0:
                raise ReaderExists(f"a reader named {name!r} already exists")
        self._change()

    def accounts(self) -> list[Account]:
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT r.name, r.created, r.password_hash IS NOT NULL, "
                "(SELECT count(*) FROM reader_keys k WHERE k.reader = r.name) "
                "FROM readers r ORDER BY r.name"
            )
            rows = cursor.fetchall()
        return [Account(name, created, keys, bool(has)) for name, created, has, keys in rows]

    def belongings(self, name: str) -> list[str]:
        """What removing ``name`` removes besides the account, in words (``2 API keys``), each
        kind they have any of."""
        found = []
        with self.database.transaction() as cursor:
            for table, one, many in BELONGINGS:
                cursor.execute(f"SELECT count(*) FROM {table} WHERE reader = ?", (name,))
                count = cursor.fetchone()[0]
                if count:
                    found.append(f"{count:,} {one if count == 1 else many}")
        return found

    def remove(self, name: str) -> bool:
        """Delete the reader and all that is theirs (:data:`BELONGINGS`), at once; whether they
        existed. Series no reader follows any more are forgotten with them."""
        with self.database.transaction() as cursor:
            cursor.execute("DELETE FROM readers WHERE name = ?", (name,))
            existed = cursor.rowcount > 0
            for table, _, _ in BELONGINGS:
                cursor.execute(f"DELETE FROM {table} WHERE reader = ?", (name,))
            forget_reader(cursor, name)
            # A pause of their downloads is no one's: a reader added later under the name
            # starts with their downloads running.
            cursor.execute("DELETE FROM download_queue WHERE id = ?", (READER_ROW + name,))
        self._change()
        return existed

    def set_password(self, name: str, password: str) -> None:
        check_password(name, password)
        password_hash = self.hasher.hash(password)
        koreader_hash = self.hasher.hash(koreader_key(password))
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE readers SET password_hash = ?, koreader_hash = ? WHERE name = ?",
                (password_hash, koreader_hash, name),
            )
            if cursor.rowcount == 0:
                raise AccountError(f"no reader is named {name!r}")
        self._change()

    def new_key(self, name: str, *, revoke_others: bool = False) -> str:
        """A new API key for ``name`` (shown once: only its hash is kept)."""
        key_id, secret = secrets.token_hex(6), secrets.token_urlsafe(24)
        key_hash = self.hasher.hash(secret)
        with self.database.transaction() as cursor:
            cursor.execute("SELECT 1 FROM readers WHERE name = ?", (name,))
            if cursor.fetchone() is None:
                raise AccountError(f"no reader is named {name!r}")
            if revoke_others:
                cursor.execute("DELETE FROM reader_keys WHERE reader = ?", (name,))
            cursor.execute(
                "INSERT INTO reader_keys(key_id, reader, key_hash, created) VALUES(?, ?, ?, ?)",
                (key_id, name, key_hash, time.time()),
            )
        return f"{KEY_PREFIX}_{key_id}_{secret}"

    # -- what a sign-in is checked against --------------------------------------------

    def stored(self, name: str) -> StoredCredentials | None:
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT password_hash, koreader_hash FROM readers WHERE name = ?", (name,)
            )
            row = cursor.fetchone()
        return None if row is None else StoredCredentials(*row)

    def key_owner(self, key: str) -> tuple[str, str, str] | None:
        """Whose API key ``key`` claims to be (its id names it), the stored hash and the secret
        to check against it: a key sent alone (``X-API-Key``) still costs one argon2 check."""
        prefix, _, rest = key.partition("_")
        key_id, _, secret = rest.partition("_")
        if prefix != KEY_PREFIX or not key_id or not secret:
            return None
        with self.database.transaction() as cursor:
            cursor.execute("SELECT reader, key_hash FROM reader_keys WHERE key_id = ?", (key_id,))
            row = cursor.fetchone()
        return None if row is None else (row[0], row[1], secret)
