"""The base class of every source adapter."""

import abc
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar, get_args

import click
from pydantic import BaseModel, ConfigDict
from starlette.routing import BaseRoute, Match, Mount, NoMatchFound, Route

from toshokan.errors import InvalidCredentials
from toshokan.models import Chapter, Manga, SearchRequest, SearchResponse, SourceConfiguration
from toshokan.models.auth import AuthType
from toshokan.models.search import FilterKey
from toshokan.sdk.auth import Credentials, headers_for
from toshokan.sdk.context import HostServices, RequestContext
from toshokan.sdk.pictures import Picture
from toshokan.sdk.urls import Urls, source_routes_path


def public(route: BaseRoute) -> BaseRoute:
    """Mark one of a source's routes as open to all, even when the source requires authentication."""
    route.toshokan_public = True  # type: ignore[attr-defined]
    return route


def is_public(route: BaseRoute) -> bool:
    return getattr(route, "toshokan_public", False)


@dataclass(frozen=True)
class Download:
    """A chapter's original file, offered whole (an archive a reader keeps offline).

    ``url`` points at one of the source's own routes (build it with
    :meth:`Source.url_for`, so it is signed when the source requires
    authentication); ``media_type`` is the file's (``application/vnd.comicbook+zip``...),
    ``size`` its length in bytes when known.
    """

    url: str
    media_type: str
    size: int | None = None


@dataclass(frozen=True)
class ChapterFile:
    """The chapter a file is, found by the file's KOReader id: its manga and chapter slugs,
    and its number of pages (a KOReader position in it is a page number)."""

    manga_slug: str
    chapter_slug: str
    pages: int


#: The most series one call of :meth:`Source.marks` names.
MARKS_AT_ONCE = 100


@dataclass(frozen=True)
class Listing:
    """A series' chapters as a check of a followed series reads them (:meth:`Source.newest_chapters`).

    ``complete`` says the list holds every chapter the source has, so one that is
    missing was removed; a list cut to the newest ones says nothing of the others.
    """

    chapters: list[Chapter]
    complete: bool = True


@dataclass(frozen=True)
class ImageFetch:
    """An image the host fetched from an upstream for a source (a page, a cover), and how it went.

    ``size`` is the bytes received, ``seconds`` the time from sending the request to the
    body's end (or the failure), ``headers`` the answer's (empty when none came).
    """

    url: str
    success: bool
    size: int
    seconds: float
    headers: Mapping[str, str]


@dataclass(frozen=True)
class OwnPages:
    """A chapter's pages as the source reads them itself (:meth:`Source.own_pages`): how many,
    what names them in the host's image cache, and each one read by its number."""

    count: int
    #: Names the chapter's pages as they are now: changes whenever they do (its file's version).
    key: str
    #: Page ``n`` (from 1 to ``count``) as readers display it, read whole.
    read: Callable[[int], Awaitable[Picture]]


class NoSettings(BaseModel):
    """Settings of an adapter that takes none."""

    model_config = ConfigDict(extra="forbid")


SettingsT = TypeVar("SettingsT", bound=BaseModel)


class Source(abc.ABC, Generic[SettingsT]):
    """A source adapter: translates one upstream into the spec's objects.

    Subclasses name their settings model as the type parameter
    (``class MyShelf(Source[MySettings])``: a pydantic model of their
    ``[sources.<slug>]`` table), so ``self.settings`` is typed; set ``version``, implement
    :meth:`configuration` and the four content methods, and raise the errors
    of :mod:`toshokan.errors` (``MangaNotFound``, ``UpstreamError``...) when
    something goes wrong. Everything else (validation of searches against the
    configuration, authentication checks, caching, error bodies) is the host's.
    """

    #: The adapter's settings schema, taken from the type parameter; the host validates the
    #: configuration file against it.
    Settings: ClassVar[type[BaseModel]] = NoSettings
    #: The adapter's own semantic version, shown in the manifest and source configuration.
    version: ClassVar[str] = "0.1.0"
    #: One line for ``toshokan sources``.
    summary: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):
            args = get_args(base)
            if args and isinstance(args[0], type) and issubclass(args[0], BaseModel):
                cls.Settings = args[0]

    def __init__(self, slug: str, settings: SettingsT, services: HostServices):
        self.slug = slug
        self.settings = settings
        self.services = services

    def content_changed(self) -> None:
        """Tell the host this source's content changed, so cached answers about it are dropped.

        A source whose content changes under the host (a library on disk) calls
        this after it updated itself; the next request sees the new content.
        """
        self.services.content_changed(self.slug)

    def activity(self) -> str | None:
        """A short note on long work under way (``scanning: 500 of 100000 chapters``),
        shown by health and ping; None when idle. Must be cheap: health calls it."""
        return None

    # -- lifecycle ---------------------------------------------------------------

    async def startup(self) -> None:
        """Prepare the adapter (open indexes, warm caches). Called once before serving."""

    async def shutdown(self) -> None:
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
        """Extra ``toshokan`` subcommands the adapter contributes (``toshokan scan``...).

        Decorate a command with :func:`toshokan.sdk.pass_services` to get the
        host's resolved services (data directory, upstream client).
        """
        return ()

    @classmethod
    def embedded_default(cls, data_dir: Path, folder: Path | None) -> dict[str, Any] | None:
        """Settings to serve this adapter with when the host is started with no configuration.

        ``folder`` is the one ``toshokan serve --library`` names. An adapter
        that can serve something out of the box (a library with sample content)
        returns its settings; the others return None.
        """
        return None

    def routes(self) -> Sequence[BaseRoute]:
        """Extra routes the adapter serves (page images, covers...), mounted under the host.

        Name each route (``Route("/pages/{n}", handler, name="page")``) and link
        to it with :meth:`url_for`. When the source requires authentication the
        host checks credentials or a link's signature before a route runs; mark
        a route that must stay open (an icon) with :func:`public`.
        """
        return ()

    @cached_property
    def mount(self) -> Mount:
        """Where the host serves :meth:`routes`: the source's own corner of ``/_/``."""
        return Mount(source_routes_path(self.slug), routes=list(self.routes()))

    @cached_property
    def _named_routes(self) -> dict[str, Route]:
        """The first route of :meth:`routes` of each name: a list of covers links each
        one without trying (and failing on) every route before it."""
        named: dict[str, Route] = {}
        for route in self.mount.routes:
            if isinstance(route, Route):
                named.setdefault(route.name, route)
        return named

    def urls(self, ctx: RequestContext | None) -> Urls:
        """The host's links (the spec's paths, this source's own routes) as the request
        ``ctx`` reached the host, or at the host's public address when there is no request."""
        return self.services.urls(None if ctx is None else ctx.base_url)

    def own_route(self, path: str) -> tuple[str, dict[str, Any]] | None:
        """The name and path parameters of the route of :meth:`routes` that ``path`` (a path on
        the host, under :attr:`mount`) leads to; None when it leads to none of them."""
        prefix = self.mount.path
        if not path.startswith(f"{prefix}/"):
            return None
        scope = {"type": "http", "method": "GET", "path": path[len(prefix) :], "root_path": ""}
        for route in self.mount.routes:
            if isinstance(route, Route):
                match, child = route.matches(scope)
                if match is Match.FULL:
                    return route.name, dict(child["path_params"])
        return None

    def url_for(
        self,
        ctx: RequestContext | None,
        name: str,
        /,
        *,
        query: Mapping[str, str] | None = None,
        **path_params: Any,
    ) -> str:
        """The absolute URL of the route ``name`` from :meth:`routes`.

        Relative to the address the request reached the host at (``ctx``), or
        to the host's public address when there is no request (a configuration's
        icon). Signed when the source requires authentication, so an image
        loader that sends no credentials still gets the image; ``query`` (a
        version for cache busting, say) is used only for links that are not signed.
        """
        route = self._named_routes.get(name)
        try:
            if route is None:
                raise NoMatchFound(name, path_params)
            path = str(route.url_path_for(name, **path_params))
        except NoMatchFound:  # another kind of route, or another route of the same name
            path = str(self.mount.url_path_for(name, **path_params))
            path = path.removeprefix(self.mount.path)
        return self.urls(ctx).source_route(self.slug, path, query)

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

    async def newest_chapters(self, manga_slug: str, ctx: RequestContext) -> Listing:
        """The series' chapters, newest first, as cheaply as the upstream allows, for the host's
        background check of a followed series (run on a schedule, spending the source's
        budget like any request). An adapter whose :meth:`chapters` costs several requests
        answers here with one where it can (the newest page of a feed), and says whether
        the list is whole; the default is :meth:`chapters`, whole.
        Raise ``MangaNotFound`` when the upstream says the series does not exist.
        """
        return Listing(await self.chapters(manga_slug, ctx))

    async def marks(self, manga_slugs: Sequence[str], ctx: RequestContext) -> Mapping[str, str]:
        """A *mark* of each series that changes whenever its chapters may have (MangaDex: the
        id of its latest uploaded chapter), for the host's background check of many followed
        series at once: asked with up to :data:`MARKS_AT_ONCE` series, in as few requests as
        the upstream allows (one, where it describes many series in one answer). The host
        then reads :meth:`newest_chapters` only of the series whose mark moved, and of every
        series now and then whatever its mark. A series left out of the answer is read in
        full (the upstream no longer lists it, say). Only an adapter that overrides this is
        asked (:meth:`offers_marks`); the others have each series read in full.
        """
        return {}

    @classmethod
    def offers_marks(cls) -> bool:
        """Whether :meth:`marks` answers: the adapter overrides it."""
        return cls.marks is not Source.marks

    async def download(
        self, manga_slug: str, chapter_slug: str, ctx: RequestContext
    ) -> Download | None:
        """The chapter's original file to download whole, or None (the default) when there is none.

        Only a source that holds its chapters as files (a library of archives)
        has one to offer; faces that can link a download (OPDS acquisition
        links) ask this, through the core, for one chapter at a time.
        """
        return None

    async def read_image(self, path: str, ctx: RequestContext) -> Picture | None:
        """The image one of the source's own routes serves at ``path`` (a page or cover URL it
        handed out, its query left off), read directly, or None when no route of it serves one.

        The host's image pipeline asks this for the source's own links, so it
        reads the bytes the route would serve without an HTTP request to
        itself: the caller was authorised already, so a link's signature is
        not checked again. A source with routes that serve images implements
        it with the code those routes share (:meth:`own_route` tells which
        route a path is); the default reads nothing.
        """
        return None

    async def own_pages(
        self, manga_slug: str, chapter_slug: str, ctx: RequestContext
    ) -> OwnPages | None:
        """The chapter's pages for the host to read directly, or None (the default).

        A source that holds its pages itself (a library of archives) answers here with
        what the host needs to read one: how many there are and a way to read each. Then
        a reader's page is read with one look at the chapter, not a page list of URLs
        built only to be taken apart again (:meth:`read_image`). Raise as :meth:`pages`
        does for a chapter or series that does not exist.
        """
        return None

    def image_fetched(self, fetch: ImageFetch) -> None:
        """Told of every image of this source's the host fetched from an upstream: for a reader
        (the page proxy) or for a kept copy, successful or not.

        For upstreams that ask to hear how their image servers did (MangaDex@Home). Called
        on the event loop as the fetch ends: queue any work, never block. The default: nothing.
        """

    def library_folder(self) -> Path | None:
        """The folder this source serves as a library of chapter files, finding files added
        to it by itself (a local library's root), where the host may keep copies of other
        sources' chapters; None (the default) for sources that serve no folder."""
        return None

    async def chapter_of_file(self, digest: str) -> ChapterFile | None:
        """The chapter whose file KOReader names ``digest`` (see :func:`toshokan.sdk.partial_md5`).

        A source that offers chapters as files computes each file's id once (a
        library at scan time) and answers here, so a book read in KOReader moves
        the position every face shows. The default, for sources without files: None.
        """
        return None

    async def filter_values(self, key: FilterKey) -> list[str]:
        """Every value a text filter (``publisher``, ``author``) can match here, when the source
        knows them all without asking an upstream (a library's index), for faces that offer
        them as a list to pick from (Komga's clients do). The default: none known.
        """
        return []

    @classmethod
    def offers_downloads(cls) -> bool:
        """Whether :meth:`download` may ever answer: the adapter overrides it."""
        return cls.download is not Source.download

    async def ping(self) -> None:
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
