"""The service every face calls: sources, their configurations, the way into them, links.

A face (the spec's JSON interface, the Alethia dialect, OPDS, the web reader)
translates requests into calls on :class:`Core` and its answers back into its
own shapes; it never validates, authorises, caches or maps errors itself. So
the same search is valid or invalid on every face. A request for a source's
content comes in through one door, :meth:`Core.visit`, and passes each layer
once: one source lookup, one configuration lookup, one authorisation, one
upstream deadline (:class:`~toshokan.core.visit.Visit`). How the host is put
together is :mod:`toshokan.core.wiring`'s; who may read,
:mod:`toshokan.core.authority`'s.
"""

import asyncio
import logging
import time
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from functools import cached_property
from typing import Any, TypeVar

from toshokan.config import HostSettings
from toshokan.core.answers import Access, Answer, Caller, check_slug, quoted
from toshokan.core.authority import Authority
from toshokan.core.cache import Kind
from toshokan.core.downloads import Downloads
from toshokan.core.follows import follows_for
from toshokan.core.hosted import HostedSource, HostedSources
from toshokan.core.images.pipeline import ImagePipeline
from toshokan.core.keeping import Keeper
from toshokan.core.passing import AS_SENT, Passing, PassingParts
from toshokan.core.progress.store import IMPLICIT_READER
from toshokan.core.readers.identify import READERS_ONLY
from toshokan.core.served import cached_answer
from toshokan.core.visit import Collaborators, Visit
from toshokan.core.wiring import wire
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
from toshokan.models.base import SOURCE_SLUG
from toshokan.sdk.auth import Credentials, headers_for
from toshokan.sdk.deadline import upstream_deadline
from toshokan.sdk.urls import Urls

T = TypeVar("T")
log = logging.getLogger("toshokan.core")


class Core:
    """The sources and everything a face needs from them."""

    def __init__(
        self, settings: HostSettings, sources: HostedSources, kept: Mapping[str, Kind] | None = None
    ):
        """``kept``: what the faces keep through the core's cache, by kind. The host's parts
        are wired by :func:`~toshokan.core.wiring.wire`; the core serves with them."""
        wiring = wire(settings, sources, kept)
        self.settings = settings
        self.sources = sources
        self.cache = wiring.cache
        self.cluster = wiring.cluster
        self.attempts = wiring.attempts
        self.database = wiring.database
        self._owns_database = wiring.owns_database
        self.progress = wiring.progress
        self.readers = wiring.readers
        self.readiness = wiring.readiness
        self.authority = Authority(
            self.cache,
            self.attempts,
            self.readers,
            sources.services.secret,
            settings.server.upstream_timeout,
        )
        # What every visit works with: handed over, so a visit never reaches back into the core.
        self.collaborators = Collaborators(
            self.cache,
            self.authority,
            lambda: self.images,
            settings.server.upstream_timeout,
            PassingParts(self.cache, sources.services, self.authenticate),
        )
        # Kept copies, tied to their originals in the progress store.
        self.keeper = Keeper(self)
        # Follows and the background jobs that check them; a kept series is its original's.
        self.follows = follows_for(self, self.keeper.original_series)
        # The download queue keeping followed series, on the follows' job engine.
        self.downloads = Downloads(self, self.follows.jobs)

    # -- life ----------------------------------------------------------------------

    async def startup(self, *, background: bool = True) -> None:
        """Start the sources; sign links to the routes of those that require authentication;
        with ``background``, work the background jobs too (a command leaves them to the host)."""
        await self.cluster.startup()
        await self.keeper.startup()  # first: a keep folder no library serves stops the host
        await self.sources.startup()
        await (self.follows.start() if background else self.follows.open())
        if background:
            await self.downloads.start()
        for hosted in self.sources.serving():
            if hosted.configuration().auth.required:
                self.sources.services.sign_links(hosted.slug)
        for_readers = [h.slug for h in self.sources.serving() if h.accepts_readers]
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
            await self.sources.shutdown()  # closes the services' claims, and so a shared database
        else:
            await self.sources.services.aclose()
        await self.cluster.shutdown()
        if self._owns_database:
            self.database.close()

    @cached_property
    def images(self) -> ImagePipeline:
        """The host's one image pipeline, made on first use (after the sources started)."""
        return ImagePipeline(self.settings, self.sources.services)

    def urls(self, caller: Caller) -> Urls:
        """The host's one link builder, on the address ``caller`` reached the host at."""
        return self.sources.services.urls(caller.base_url)

    # -- sources -------------------------------------------------------------------

    def source(self, slug: str) -> HostedSource:
        """The serving source ``slug``; ``SOURCE_NOT_FOUND`` for anything else."""
        if not SOURCE_SLUG.fullmatch(slug):
            raise SourceNotFound(f"No source has the slug {quoted(slug)}.")
        return self.sources.get(slug)

    async def visit(self, slug: str, caller: Caller, passing: Passing = AS_SENT) -> Visit:
        """The one door to a source's content for one request: the source ``slug`` resolved,
        its configuration read, the request's upstream deadline started. The caller is
        authorised when the visit first needs it, once, with their credentials passed on the
        face's way (``passing``)."""
        hosted = self.source(slug)
        config = await self.configuration(hosted)
        return Visit(self.collaborators, hosted, config, caller, passing)

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
        return await cached_answer(
            self.cache,
            "configuration",
            (slug, config.hash),
            lambda: _ready(config),
            exclude_none=True,
            source=slug,
        )

    async def manifest(self) -> Answer[Any]:
        async def compute() -> Any:
            return self.sources.manifest()

        generations = tuple(self.cache.generation(s) for s in sorted(self.sources.by_slug))
        return await cached_answer(self.cache, "manifest", generations, compute, source=None)

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

    # -- authentication ------------------------------------------------------------

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
