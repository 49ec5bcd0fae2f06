"""Whose catalogue account a request to the catalogue carries: the operator's, or one reader's.

With ``auth = "none"`` (the default) every request carries the credentials the
operator configured (or none), and the catalogue refusing them is a
misconfiguration of the source. With ``auth = "basic"`` the source requires
authentication and each reader signs in with their own account on the
catalogue: their HTTP Basic credentials are checked against the catalogue
and sent with that reader's requests, so a refusal is the reader's
``INVALID_CREDENTIALS``.

Image loaders send no credentials, so a reader's page and cover links name
the account by a keyed hash of its credentials (never the credentials, and
not reversible without the host's secret), and the credentials behind each
hash are kept in memory, for :data:`READER_SECONDS` after the reader's last
request. With ``[cluster] redis`` they are also kept in the host's shared
secrets (encrypted with the host's secret), so every process and replica
serves every reader's links and no sticky sessions are needed. A link whose
account has been forgotten (a restart without a shared Redis) is not found;
opening the chapter again makes a fresh one.
"""

import json
from dataclasses import dataclass, field

import httpx
from cachetools import TTLCache

from toshokan.sdk import (
    AuthType,
    Credentials,
    DerivedKey,
    HostServices,
    InvalidCredentials,
    RequestContext,
)
from toshokan.sdk.auth import credentials_from_headers
from toshokan.sources.opds.settings import Settings

#: How long a reader's credentials stay known after their last request, for their links.
READER_SECONDS = 24 * 3600
#: Readers whose credentials are kept at once; the least recently seen go first.
MAX_READERS = 10_000
#: Seconds between two writes of a reader's credentials to the shared secrets (each renews them).
SHARED_RENEWAL_SECONDS = 3600
#: The account name in links made with the operator's credentials.
OPERATOR = "op"


@dataclass(frozen=True)
class Account:
    """Credentials for the catalogue and what a refusal of them means."""

    auth: httpx.BasicAuth | None
    #: Names the account in links and cache keys: :data:`OPERATOR`, or a reader's hash.
    key: str = OPERATOR
    #: The operator's settings hold these credentials: a refusal is a misconfiguration.
    configured: bool = True
    #: Taken out of every error message (a reader's name and password).
    secrets: tuple[str, ...] = field(default=(), repr=False)


class Accounts:
    """The operator's account, and the accounts of the readers seen recently."""

    def __init__(self, settings: Settings, services: HostServices, slug: str):
        self.services = services
        self.slug = slug
        secret = services.secret
        self.readers_sign_in = settings.auth == "basic"
        password = settings.password.get_secret_value()
        if self.readers_sign_in:
            # No operator account: the catalogue is asked anonymously until a reader signs in.
            self.operator = Account(auth=None, configured=False)
        else:
            auth = httpx.BasicAuth(settings.username, password) if settings.username else None
            self.operator = Account(auth=auth)
        self._key = DerivedKey(secret, "opds-readers", slug)
        self._readers: TTLCache[str, Account] = TTLCache(maxsize=MAX_READERS, ttl=READER_SECONDS)
        # Readers this process wrote to the shared secrets lately: not written on every request.
        self._shared: TTLCache[str, bool] = TTLCache(
            maxsize=MAX_READERS, ttl=SHARED_RENEWAL_SECONDS
        )

    def reader(self, credentials: Credentials) -> Account:
        """The account of a reader's Basic credentials (not yet remembered for links)."""
        username, password = credentials.username or "", credentials.password or ""
        return Account(
            auth=httpx.BasicAuth(username, password),
            key=f"r{self._key.digest(username, password, length=32)}",
            configured=False,
            secrets=tuple(s for s in (username, password) if len(s) >= 3),
        )

    async def of(self, ctx: RequestContext) -> Account:
        """Whose account answers this request: the reader's when readers sign in, remembered
        for the links the answer makes (by every process, with shared secrets)."""
        if not self.readers_sign_in:
            return self.operator
        credentials = credentials_from_headers(AuthType.BASIC, ctx.auth)
        if credentials is None:  # the host lets no such request through; never guess
            raise InvalidCredentials("This source needs a reader's catalogue account.")
        account = self.reader(credentials)
        self._readers[account.key] = account
        shared = self.services.shared_secrets
        if shared is not None and account.key not in self._shared:
            sign_in = {"username": credentials.username, "password": credentials.password}
            await shared.keep(self._name(account.key), json.dumps(sign_in).encode(), READER_SECONDS)
            self._shared[account.key] = True
        return account

    async def named(self, key: str) -> Account | None:
        """The account a link names, or None when it is unknown or forgotten."""
        if not self.readers_sign_in:
            return self.operator if key == OPERATOR else None
        account = self._readers.get(key)
        shared = self.services.shared_secrets
        if account is not None or shared is None:
            return account
        kept = await shared.find(self._name(key))
        if kept is None:
            return None
        sign_in = json.loads(kept)
        account = self.reader(Credentials(type=AuthType.BASIC, **sign_in))
        if account.key != key:  # sealed under this name by no sign-in of this source
            return None
        self._readers[key] = account
        return account

    def _name(self, key: str) -> str:
        return f"opds:{self.slug}:{key}"
