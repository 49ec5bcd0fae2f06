"""Who may read a source: the caller's credentials checked against it, and signed links checked.

Apart from :class:`~toshokan.core.service.Core` so that a
:class:`~toshokan.core.visit.Visit` is handed the one thing it needs to decide
a caller's access, not the whole core: the visit asks here once per request,
the answer is remembered briefly in the core's cache, and every failed attempt
spends the client's attempt budget.
"""

from collections.abc import Callable
from dataclasses import dataclass

from toshokan.core.access import AttemptGate
from toshokan.core.answers import Access, Caller
from toshokan.core.cache import ResultCache
from toshokan.core.hosted import HostedSource
from toshokan.core.readers import ReaderGate, host_reader
from toshokan.core.signing import ExpiredLink, credential_key
from toshokan.errors import InvalidCredentials
from toshokan.models import SourceConfiguration
from toshokan.sdk.auth import auth_headers_from, credentials_from_headers
from toshokan.sdk.deadline import upstream_deadline

#: What a reader of the host is let into a source that accepts them with: no headers for the
#: adapter, and a key that marks its answers private.
READERS_ACCESS = Access({}, "readers")


@dataclass(frozen=True)
class Authority:
    """The host's decisions on callers: credentials, readers and signed links."""

    #: Where decisions are remembered (``authorization``, half a minute).
    cache: ResultCache
    #: Every failed attempt counted, per client address.
    attempts: AttemptGate
    readers: ReaderGate
    #: The host's secret, which keys the remembered decisions.
    secret: bytes
    upstream_timeout: float

    async def authorize(
        self, hosted: HostedSource, config: SourceConfiguration, caller: Caller
    ) -> Access:
        """The caller's auth headers for this source, checked when the source requires them."""
        if hosted.accepts_readers:
            # A reader of the host, checked here; the adapter serves every one of them alike,
            # so they share its answers, which no shared cache keeps.
            await host_reader(self.readers, caller.headers, caller.client)
            return READERS_ACCESS
        auth = auth_headers_from(config.auth.type, caller.headers)
        key = credential_key(self.secret, auth)
        if not config.auth.required:
            return Access(auth, key)
        if not auth:
            raise InvalidCredentials(
                "This source requires authentication: send the headers POST "
                f"/{hosted.slug}/authenticate returned."
            )
        credentials = credentials_from_headers(config.auth.type, caller.headers)
        attempts_key = f"{caller.client}:{hosted.slug}"
        # Before the remembered decisions: they must not answer a client that is over its limit.
        await self.attempts.refuse_if_over(attempts_key)

        async def decide() -> bool:
            async def check() -> None:
                async with upstream_deadline(self.upstream_timeout):
                    allowed = await hosted.source.authorize(auth, credentials)
                if not allowed:
                    raise InvalidCredentials()

            try:
                await self.attempts.check(attempts_key, check)
            except InvalidCredentials:
                return False
            return True

        allowed = await self.cache.get_or_compute("authorization", (hosted.slug, key), decide)
        if not allowed:
            raise InvalidCredentials(
                "The authentication headers were not accepted; authenticate again."
            )
        return Access(auth, key)

    async def check_link(self, slug: str, client: str, verify: Callable[[], int]) -> int:
        """A signed link's expiry, from ``verify``, with a forged signature counted as a failed
        attempt of ``client`` on source ``slug`` (a genuine link that expired is not)."""
        until = 0
        stale: list[ExpiredLink] = []

        async def attempt() -> None:
            nonlocal until
            try:
                until = verify()
            except ExpiredLink as expired:
                stale.append(expired)

        await self.attempts.check(f"{client}:{slug}", attempt)
        if stale:
            raise stale[0]
        return until
