"""The base class of every source adapter."""

import abc
from collections.abc import Mapping, Sequence
from typing import ClassVar

import click
from pydantic import BaseModel, ConfigDict
from starlette.routing import BaseRoute

from toshokan.errors import InvalidCredentials
from toshokan.models import Chapter, Manga, SearchRequest, SearchResponse, SourceConfiguration
from toshokan.models.auth import AuthType
from toshokan.sdk.auth import Credentials, headers_for
from toshokan.sdk.context import HostServices, RequestContext


class NoSettings(BaseModel):
    """Settings of an adapter that takes none."""

    model_config = ConfigDict(extra="forbid")


class Source(abc.ABC):
    """A source adapter: translates one upstream into the spec's objects.

    Subclasses set ``Settings`` (a pydantic model of their ``[sources.<slug>]``
    table in the configuration file) and ``version``, implement
    :meth:`configuration` and the four content methods, and raise the errors
    of :mod:`toshokan.errors` (``MangaNotFound``, ``UpstreamError``...) when
    something goes wrong. Everything else (validation of searches against the
    configuration, authentication checks, caching, error bodies) is the host's.
    """

    #: The adapter's settings schema; the host validates the configuration file against it.
    Settings: ClassVar[type[BaseModel]] = NoSettings
    #: The adapter's own semantic version, shown in the manifest and source configuration.
    version: ClassVar[str] = "0.1.0"
    #: One line for ``toshokan sources``.
    summary: ClassVar[str] = ""

    def __init__(self, slug: str, settings: BaseModel, services: HostServices):
        self.slug = slug
        self.settings = settings
        self.services = services

    # -- lifecycle ---------------------------------------------------------------

    async def startup(self) -> None:  # noqa: B027 - optional hook
        """Prepare the adapter (open indexes, warm caches). Called once before serving."""

    async def shutdown(self) -> None:  # noqa: B027 - optional hook
        """Release what :meth:`startup` took."""

    # -- declaration -------------------------------------------------------------

    @abc.abstractmethod
    def configuration(self) -> SourceConfiguration:
        """The source configuration served at ``GET /:source``.

        Called at start-up (where an invalid one stops the host) and again
        whenever the host needs it, so a source whose tags change (a local
        library) can return the current ones. ``version`` and ``hash`` are
        filled in by the host.
        """

    @classmethod
    def commands(cls) -> Sequence[click.Command]:
        """Extra ``toshokan`` subcommands the adapter contributes (``toshokan scan``...)."""
        return ()

    def routes(self) -> Sequence[BaseRoute]:
        """Extra routes the adapter serves, mounted under ``/_/<slug>/``."""
        return ()

    # -- content -----------------------------------------------------------------

    @abc.abstractmethod
    async def search(self, request: SearchRequest, ctx: RequestContext) -> SearchResponse: ...

    @abc.abstractmethod
    async def manga(self, manga_slug: str, ctx: RequestContext) -> Manga: ...

    @abc.abstractmethod
    async def chapters(self, manga_slug: str, ctx: RequestContext) -> list[Chapter]:
        """Every chapter; the host orders them newest first."""

    @abc.abstractmethod
    async def pages(self, manga_slug: str, chapter_slug: str, ctx: RequestContext) -> list[str]:
        """Absolute page image URLs in reading order."""

    async def ping(self) -> None:  # noqa: B027 - optional hook
        """Make one light request to the upstream; raise if it is unreachable."""

    # -- authentication ------------------------------------------------------------

    async def verify_credentials(self, credentials: Credentials) -> bool:
        """Whether the upstream accepts these credentials.

        The default accepts ``bearer`` and ``cookie`` (passed through, as the
        spec rules) and refuses everything else, so an adapter that declares
        ``basic``, ``session`` or ``api_key`` must say how to check them.
        """
        return credentials.type in (AuthType.BEARER, AuthType.COOKIE)

    async def authenticate(self, credentials: Credentials) -> dict[str, str]:
        """Check credentials and return the headers the client sends from now on.

        Raises ``InvalidCredentials`` (or ``RateLimited``) on failure. The
        ``session`` type must override this to return the upstream's cookies.
        """
        if not await self.verify_credentials(credentials):
            raise InvalidCredentials("The credentials were not accepted.")
        return headers_for(credentials)

    async def authorize(self, auth: Mapping[str, str], credentials: Credentials | None) -> bool:
        """Whether a request carrying these auth headers may proceed when auth is required.

        ``credentials`` is what the headers decode to (None when they are
        absent or malformed). The default re-checks them with
        :meth:`verify_credentials`; the host caches the answer briefly.
        """
        return credentials is not None and await self.verify_credentials(credentials)
