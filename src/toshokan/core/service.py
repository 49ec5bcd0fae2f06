"""The service every face calls: sources, validation, authorisation, cache, images, links.

A face (the spec's JSON interface, the Alethia dialect, OPDS, the web reader)
translates requests into calls on :class:`Core` and its answers back into its
own shapes; it never validates, authorises, caches or maps errors itself. So
the same search is valid or invalid on every face. A request for a source's
content comes in through one door, :meth:`Core.visit`, and passes each layer
once: one source lookup, one configuration lookup, one authorisation, one
upstream deadline (:class:`~toshokan.core.visit.Visit`).
"""

import asyncio
import functools
import logging
import re
import time
from collections.abc import Awaitable, Callable, Hashable, Mapping
from contextlib import AbstractAsyncContextManager
from functools import cached_property
from typing import Any, TypeVar

from toshokan.config import HostSettings
from toshokan.core.access import AttemptGate
from toshokan.core.answers import (
    SHARED_CODECS,
    Access,
    Answer,
    Caller,
    check_slug,
    dumped,
    shown,
)
from toshokan.core.cache import Kind, ResultCache
from toshokan.core.database import ServerDatabase, open_database
from toshokan.core.database.claims import DatabaseClaims
from toshokan.core.downloads import Downloads
from toshokan.core.follows import follows_for
from toshokan.core.host import Host, HostedSource
from toshokan.core.images.pipeline import PAGE_LIST_SECONDS, ImagePipeline
from toshokan.core.keeping import Keeper
from toshokan.core.limits import MovingWindowLimit
from toshokan.core.progress import ProgressStore
from toshokan.core.progress.store import IMPLICIT_READER
from toshokan.core.readers import ReaderGate, Readers, host_reader
from toshokan.core.readers.identify import READERS_ONLY
from toshokan.core.readiness import CHECK_SECONDS, Readiness
from toshokan.core.served import note
from toshokan.core.shared.cluster import Cluster
from toshokan.core.signing import ExpiredLink, credential_key, signed_query
from toshokan.core.visit import Visit
from toshokan.errors import (
    HostError,
    InvalidCredentials,
    InvalidRequest,
    MissingFields,
    NotFound,
    SourceNotFound,
)
from toshokan.models import AuthType, Ping, SourceConfiguration
from toshokan.models.auth import AUTH_FIELDS
from toshokan.models.base import SOURCE_SLUG_PATTERN
from toshokan.sdk.auth import Credentials, auth_headers_from, credentials_from_headers, headers_for
from toshokan.sdk.deadline import upstream_deadline
from toshokan.sdk.urls import Urls

T = TypeVar("T")
log = logging.getLogger("toshokan.core")
_SOURCE = re.compile(SOURCE_SLUG_PATTERN)
#: Seconds the core memoises configurations, the manifest and authorisation decisions.
MEMO_SECONDS = 30
#: What a reader of the host is let into a source that accepts them with: no headers for the
#: adapter, and a key that marks its answers private.
READERS_ACCESS = Access({}, "readers")


class Core:
    """The sources and everything a face needs from them."""

    def __init__(self, settings: HostSettings, host: Host, kept: Mapping[str, Kind] | None = None):
        """``kept``: what the faces keep through the core's cache, by kind."""
        self.settings = settings
        self.host = host
        cache = settings.cache
        self.cache = ResultCache(
            {
                "manifest": MEMO_SECONDS,
                "configuration": MEMO_SECONDS,
                "authorization": MEMO_SECONDS,
                "search": cache.search,
                "manga": cache.manga,
                "chapters": cache.chapters,
                # A file's link is handed out for half its life at most, so it stays valid.
                "download": settings.host.link_ttl // 2,
                # Never longer than a signed page link lives.
                "page-list": min(PAGE_LIST_SECONDS, settings.host.link_ttl),
                **(kept or {}),
            },
            cache.max_entries,
        )
        # Shared with every process of the host through Redis when [cluster] redis is set.
        self.cluster = Cluster(settings)
        self.cluster.share_cache(self.cache, SHARED_CODECS)
        self.cluster.share_services(host.services)
        self.attempts = AttemptGate(
            MovingWindowLimit(settings.limits.auth_attempts, "toshokan-auth", self.cluster.counters)
        )
        host.services.on_content_changed(self.cache.invalidate)
        # Every signed link the host hands out, of any face or source, is signed this one way.
        host.services.provide(
            link_signer=functools.partial(
                signed_query, host.services.secret, ttl=settings.host.link_ttl
            )
        )
        # Readers and their progress: one database every face reads and writes; with
        # [cluster] database, the one the host's services opened for slug claims.
        claims = host.services.claims
        self._owns_database = not isinstance(claims, DatabaseClaims)
        self.database = (
            claims.database if isinstance(claims, DatabaseClaims) else open_database(settings)
        )
        self.progress = ProgressStore(self.database)
        # Kept copies, tied to their originals in the progress store.
        self.keeper = Keeper(self)
        self.readers = ReaderGate(Readers(self.database), self.attempts, host.services.secret)
        # Follows and the background jobs that check them.
        self.follows = follows_for(self)
        # The download queue keeping followed series, on the follows' job engine.
        self.downloads = Downloads(self, self.follows.jobs)
        # What the host needs to serve, asked by load balancers (/_/ready).
        self.readiness = Readiness()
        self.cluster.add_checks(self.readiness)
        if isinstance(self.database, ServerDatabase):
            # Required: readers, progress and new slug claims fail here without it. Borrowing
            # a connection gives up before the check's own bound, so the answer says why.
            answer = functools.partial(self.database.answer, CHECK_SECONDS * 0.75)
            self.readiness.add("postgresql", functools.partial(asyncio.to_thread, answer))

    # -- life ----------------------------------------------------------------------

    async def startup(self, *, background: bool = True) -> None:
        """Start the sources; sign links to the routes of those that require authentication;
        with ``background``, work the background jobs too (a command leaves them to the host)."""
        await self.cluster.startup()
        await self.keeper.startup()  # first: a keep folder no library serves stops the host
        await self.host.startup()
        await (self.follows.start() if background else self.follows.open())
        if background:
            await self.downloads.start()
        for hosted in self.host.serving():
            if hosted.configuration().auth.required:
                self.host.services.sign_links(hosted.slug)
        for_readers = [h.slug for h in self.host.serving() if h.accepts_readers]
        if for_readers and not await asyncio.to_thread(self.readers.readers.any):
            several = len(for_readers) > 1
            log.warning(
                "%s accept%s the host's readers, and the host has none yet: no one opens "
                "%s until `toshokan readers add`",
                ", ".join(for_readers),
                "" if several else "s",
                "them" if several else "it",
            )

    async def shutdown(self, *, started: bool = True) -> None:
        """Stop what :meth:`startup` started (``started=False``: only the follows were opened,
        by a command that needed no source)."""
        await self.downloads.stop()
        await self.follows.stop()
        await self.keeper.shutdown()
        if started:
            await self.host.shutdown()  # closes the services' claims, and so a shared database
        else:
            await self.host.services.aclose()
        await self.cluster.shutdown()
        if self._owns_database:
            self.database.close()

    @cached_property
    def images(self) -> ImagePipeline:
        """The host's one image pipeline, made on first use (after the sources started)."""
        return ImagePipeline(self.settings, self.host.services)

    def urls(self, caller: Caller) -> Urls:
        """The host's one link builder, on the address ``caller`` reached the host at."""
        return self.host.services.urls(caller.base_url)

    # -- sources -------------------------------------------------------------------

    def source(self, slug: str) -> HostedSource:
        """The serving source ``slug``; ``SOURCE_NOT_FOUND`` for anything else."""
        if not _SOURCE.fullmatch(slug):
            raise SourceNotFound(f"No source has the slug {shown(slug)}.")
        return self.host.get(slug)

    async def visit(self, slug: str, caller: Caller) -> Visit:
        """The one door to a source's content for one request: the source ``slug`` resolved,
        its configuration read, the request's upstream deadline started. The caller is
        authorised when the visit first needs it, once."""
        hosted = self.source(slug)
        return Visit(self, hosted, await self.configuration(hosted), caller)

    async def configuration(self, hosted: HostedSource) -> SourceConfiguration:
        async def compute() -> SourceConfiguration:
            return hosted.configuration()

        # A short memo: a library's tags change while it runs.
        key = (hosted.slug, self.cache.generation(hosted.slug))
        return await self.cache.get_or_compute("configuration", key, compute)

    async def configuration_answer(self, slug: str) -> Answer[SourceConfiguration]:
        hosted = self.source(slug)
        config = await self.configuration(hosted)
        # Keyed by the hash, so the bytes follow the configuration the moment it changes.
        return await self.answer(
            "configuration",
            (slug, config.hash),
            lambda: _ready(config),
            exclude_none=True,
            source=slug,
        )

    async def manifest(self) -> Answer[Any]:
        async def compute() -> Any:
            return self.host.manifest()

        generations = tuple(self.cache.generation(s) for s in sorted(self.host.sources))
        return await self.answer("manifest", generations, compute, source=None)

    def health(self, slug: str) -> str | None:
        """Raises unless ``slug`` is a serving source: the adapter runs, nothing upstream is asked.

        Returns what the source says it is busy with, and whether shared state is missing."""
        return self._detail(self.source(slug))

    def _detail(self, hosted: HostedSource) -> str | None:
        details = [
            hosted.source.activity(),
            self.cluster.detail(),
            self.follows.detail(),
            self.downloads.detail(),
        ]
        return "; ".join(d for d in details if d) or None

    async def ping(self, slug: str) -> Ping:
        hosted = self.source(slug)
        deadline = self.settings.server.upstream_timeout
        started = time.perf_counter()
        try:
            await asyncio.wait_for(hosted.source.ping(), timeout=deadline)
            result = Ping(status="ok", latencyMs=0)
        except TimeoutError:
            result = Ping(status="down", latencyMs=0, error=f"No answer within {deadline:g} s.")
        except HostError as error:
            result = Ping(status="down", latencyMs=0, error=error.message)
        except Exception as error:  # ping reports failure; it must not become one
            result = Ping(
                status="down",
                latencyMs=0,
                error=f"{type(error).__name__}: the upstream check failed.",
            )
        result.latencyMs = round((time.perf_counter() - started) * 1000, 2)
        result.detail = self._detail(hosted)
        return result

    # -- authorisation -------------------------------------------------------------

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
        key = credential_key(self.host.services.secret, auth)
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
                async with self.upstream_deadline():
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

    async def authenticate(self, slug: str, body: Any, caller: Caller) -> dict[str, str]:
        """Check credentials; the headers the client sends from now on. Failures raise."""
        hosted = self.source(slug)
        config = await self.configuration(hosted)
        auth_type = config.auth.type
        if auth_type is AuthType.NONE:
            return {}
        credentials = parse_credentials(auth_type, body)
        if hosted.accepts_readers:
            return await self._reader_sign_in(credentials, caller)
        headers: dict[str, str] = {}

        async def attempt() -> None:
            async with self.upstream_deadline():
                headers.update(await hosted.source.authenticate(credentials))

        await self.attempts.check(f"{caller.client}:{slug}", attempt)
        return headers

    async def _reader_sign_in(self, credentials: Credentials, caller: Caller) -> dict[str, str]:
        """A reader's name and password or API key checked (failures spend the readers' attempt
        budget); the Basic header that carries them."""
        reader = await self.readers.basic(
            credentials.username or "", credentials.password or "", caller.client
        )
        if reader == IMPLICIT_READER:
            raise InvalidCredentials(READERS_ONLY)
        return headers_for(credentials)

    def upstream_deadline(self) -> AbstractAsyncContextManager[None]:
        """``[server] upstream_timeout`` for everything one adapter call asks upstream."""
        return upstream_deadline(self.settings.server.upstream_timeout)

    async def answer(
        self,
        kind: str,
        key: Hashable,
        compute: Callable[[], Awaitable[T]],
        *,
        source: str | None,
        exclude_none: bool = False,
    ) -> Answer[T]:
        """The answer of ``kind`` under ``key``: cached, or computed now and serialised once."""

        async def serialised() -> Answer[T]:
            value = await compute()
            return Answer(value, dumped(value, exclude_none))

        answer = await self.cache.get_or_compute(kind, key, serialised)
        note(self.cache, kind, key, answer, source)
        return answer


async def _ready(value: T) -> T:
    return value


def parse_credentials(auth_type: AuthType, body: Any) -> Credentials:
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise InvalidRequest("The authentication body must be a JSON object.")
    missing = Credentials.missing_fields(auth_type, body)
    if missing:
        # Worded without the type's name, which faces spell differently (api_key, apiKey).
        raise MissingFields(f"Missing field(s) this source's sign-in needs: {', '.join(missing)}.")
    fields = {name: body[name] for name in AUTH_FIELDS[auth_type]}
    return Credentials(type=auth_type, **fields)


__all__ = ["Access", "Answer", "Caller", "Core", "NotFound", "Visit", "check_slug"]
