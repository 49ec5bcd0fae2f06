"""One request's visit to one source: the door every face's content goes through.

A face asks the core once per request (:meth:`toshokan.core.Core.visit`): the
source is resolved, its configuration read and the request's one upstream
deadline started, there and then; the caller's authorisation is decided the
first time something needs it and kept for the rest of the request. Search,
details, chapters, pages, files and images are then asked of the visit, so a
request that lists a chapter's pages and reads one of them still looks the
source up once and authorises once, and every upstream call it makes shares
one deadline.

Slugs and search bodies are checked before authorisation, as the core always
has: a malformed request is told so whoever sends it.
"""

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from toshokan.core.answers import PAGE_LIST, Access, Answer, Caller, check_slug
from toshokan.core.authority import Authority
from toshokan.core.cache import ResultCache
from toshokan.core.hosted import HostedSource
from toshokan.core.images.pictures import clamp_width
from toshokan.core.passing import AS_SENT, AsSent, Passing, PassingParts, passed
from toshokan.core.search import search_of
from toshokan.core.served import cached_answer
from toshokan.errors import ChapterNotFound, HostError, MangaNotFound
from toshokan.models import Chapter, FilterKey, Manga, SearchResponse, SourceConfiguration
from toshokan.models.content import newest_first
from toshokan.sdk.context import RequestContext
from toshokan.sdk.deadline import upstream_deadline
from toshokan.sdk.pictures import Picture
from toshokan.sdk.source import Download, OwnPages, Source

T = TypeVar("T")


class Images(Protocol):
    """The host's image pipeline, as a visit hands it its pages and covers."""

    async def render(
        self, visit: "Visit", url: str, *, width: int | None = None, as_jpeg: bool = False
    ) -> Picture: ...

    async def render_own(
        self,
        visit: "Visit",
        pages: OwnPages,
        number: int,
        *,
        width: int | None = None,
        as_jpeg: bool = False,
    ) -> Picture: ...


class Pages:
    """A chapter's pages as a reader turns them: how many, and each one's image (from 0)."""

    def __init__(self, count: int, image: Callable[[int, int | None, bool], Awaitable[Picture]]):
        self.count = count
        self._image = image

    async def image(
        self, index: int, *, width: int | str | None = None, as_jpeg: bool = False
    ) -> Picture:
        """Page ``index`` (from 0) through the host's image pipeline, as :meth:`Visit.image`;
        at most ``width`` wide, a reader's ``maxWidth`` as sent (:func:`clamp_width`)."""
        return await self._image(index, clamp_width(width), as_jpeg)


@dataclass(frozen=True)
class Collaborators:
    """What every visit of one host works with, handed over when it is built: the core's cache,
    the authority that decides callers, the image pipeline (made once the sources started,
    hence asked for) and the upstream timeout every request's deadline is."""

    cache: ResultCache
    authority: Authority
    images: Callable[[], Images]
    upstream_timeout: float
    #: What passing a caller's credentials on to a source needs (a face's way, :mod:`passing`).
    passing: PassingParts


class Visit:
    """One caller's request to one serving source, as the core answers it."""

    def __init__(
        self,
        collaborators: Collaborators,
        hosted: HostedSource,
        config: SourceConfiguration,
        caller: Caller,
        passing: Passing = AS_SENT,
        *,
        started: float | None = None,
    ):
        self.collaborators = collaborators
        self.hosted = hosted
        self.slug = hosted.slug
        self.source: Source[Any] = hosted.source
        self.config = config
        self.caller = caller
        self.passing = passing
        #: When the request's upstream deadline started (the running loop's clock).
        self.started = asyncio.get_running_loop().time() if started is None else started
        self._access: Access | None = None
        self._refused: HostError | None = None
        self._deciding = asyncio.Lock()

    @property
    def accepts_readers(self) -> bool:
        """Whether the host's readers open this source (``auth = "readers"``), by any of the
        ways they sign in: Basic, ``X-API-Key`` or a face's session cookie."""
        return self.hosted.accepts_readers

    @property
    def offers_downloads(self) -> bool:
        """Whether asking :meth:`download` of this source's chapters can find anything."""
        return self.source.offers_downloads()

    def deadline(self) -> AbstractAsyncContextManager[None]:
        """The request's one upstream deadline: ``[server] upstream_timeout`` from the visit's start,
        shared by the authorisation and every content call."""
        return upstream_deadline(
            self.collaborators.upstream_timeout, since=self.started, moved=self._postponed
        )

    def _postponed(self, seconds: float) -> None:
        """Background work waited ``seconds`` for its turn at a budget: not the upstream's time."""
        self.started += seconds

    async def access(self) -> Access:
        """The caller's authorisation for this source: decided once, on first need."""
        async with self._deciding:
            if self._refused is not None:
                raise self._refused
            if self._access is None:
                try:
                    self._access = await self._decide()
                except HostError as refused:
                    self._refused = refused
                    raise
            return self._access

    async def _decide(self) -> Access:
        authority = self.collaborators.authority
        caller = self.caller
        if not isinstance(self.passing, AsSent):
            # The caller's credentials as the source takes them, the face's way (a session
            # sign-in keeps a deadline of its own).
            caller = await passed(
                self.passing,
                self.collaborators.passing,
                self.slug,
                self.hosted.accepts_readers,
                self.config,
                caller,
            )
        if not self.config.auth.required:  # nothing is asked upstream: no deadline to keep
            return await authority.authorize(self.hosted, self.config, caller)
        async with self.deadline():
            return await authority.authorize(self.hosted, self.config, caller)

    async def admit_by_link(self, verify: Callable[[], int]) -> int:
        """Let the caller in on the authority of a signed link rather than credentials (image
        loaders send none); the link's expiry. ``verify`` checks the signature, a forgery
        counted as a failed attempt."""
        authority = self.collaborators.authority
        until = await authority.check_link(self.slug, self.caller.client, verify)
        self._access = Access({}, "")
        return until

    def context(self, access: Access) -> RequestContext:
        return RequestContext(base_url=self.caller.base_url, auth=access.auth)

    # -- content ---------------------------------------------------------------------

    async def search(self, body: Any) -> Answer[SearchResponse]:
        request, key = search_of(body, self.config.search)
        access = await self.access()
        ctx = self.context(access)

        async def compute() -> SearchResponse:
            async with self.deadline():
                result = await self.source.search(request, ctx)
            result.page = request.page
            return result

        return await self._content("search", key, access, compute)

    async def manga(self, manga_slug: str) -> Answer[Manga]:
        check_slug(manga_slug, MangaNotFound)
        access = await self.access()
        ctx = self.context(access)

        async def compute() -> Manga:
            async with self.deadline():
                return await self.source.manga(manga_slug, ctx)

        return await self._content("manga", (manga_slug,), access, compute)

    async def chapters(self, manga_slug: str) -> Answer[list[Chapter]]:
        check_slug(manga_slug, MangaNotFound)
        access = await self.access()
        ctx = self.context(access)

        async def compute() -> list[Chapter]:
            async with self.deadline():
                return newest_first(await self.source.chapters(manga_slug, ctx))

        return await self._content("chapters", (manga_slug,), access, compute)

    async def pages(self, manga_slug: str, chapter_slug: str) -> Answer[list[str]]:
        """Page image URLs in reading order; never cached, since they may be temporary."""
        _check_chapter(manga_slug, chapter_slug)
        access = await self.access()
        async with self.deadline():
            urls = await self.source.pages(manga_slug, chapter_slug, self.context(access))
        return Answer(urls, PAGE_LIST.dump_json(urls), private=bool(access.key))

    async def page_list(self, manga_slug: str, chapter_slug: str) -> list[str]:
        """The chapter's page URLs, remembered briefly for this caller (``page-list`` in the
        core's cache): a reader fetching a chapter page by page asks the source for the list
        once, not once per page (MangaDex allows a few dozen lists a minute)."""
        _check_chapter(manga_slug, chapter_slug)
        return await self._page_list(manga_slug, chapter_slug, await self.access())

    async def _page_list(self, manga_slug: str, chapter_slug: str, access: Access) -> list[str]:
        async def ask() -> list[str]:
            async with self.deadline():
                return await self.source.pages(manga_slug, chapter_slug, self.context(access))

        key = self._key(manga_slug, chapter_slug, access=access)
        return await self.collaborators.cache.get_or_compute("page-list", key, ask)

    async def chapter_pages(self, manga_slug: str, chapter_slug: str) -> Pages:
        """The chapter's pages to read one of: read by the source itself when it holds them
        (:meth:`~toshokan.sdk.Source.own_pages`, one look at the chapter, remembered as the
        page list is: ``own-pages`` in the core's cache), else the images at the URLs of its
        page list (:meth:`page_list`)."""
        _check_chapter(manga_slug, chapter_slug)
        access = await self.access()
        own = None
        if type(self.source).own_pages is not Source.own_pages:

            async def look() -> OwnPages | None:
                async with self.deadline():
                    return await self.source.own_pages(
                        manga_slug, chapter_slug, self.context(access)
                    )

            key = self._key(manga_slug, chapter_slug, access=access)
            own = await self.collaborators.cache.get_or_compute("own-pages", key, look)
        if own is None:
            urls = await self._page_list(manga_slug, chapter_slug, access)

            async def listed(index: int, width: int | None, as_jpeg: bool) -> Picture:
                return await self.image(urls[index], width=width, as_jpeg=as_jpeg)

            return Pages(len(urls), listed)
        images = self.collaborators.images()

        async def read(index: int, width: int | None, as_jpeg: bool) -> Picture:
            return await images.render_own(self, own, index + 1, width=width, as_jpeg=as_jpeg)

        return Pages(own.count, read)

    async def page(
        self,
        manga_slug: str,
        chapter_slug: str,
        index: int,
        *,
        width: int | str | None = None,
        as_jpeg: bool = False,
    ) -> tuple[int, Picture | None]:
        """How many pages the chapter has, and page ``index``'s image (from 0; None when the
        chapter has no such page), as :meth:`chapter_pages` reads them."""
        pages = await self.chapter_pages(manga_slug, chapter_slug)
        if not 0 <= index < pages.count:
            return pages.count, None
        return pages.count, await pages.image(index, width=width, as_jpeg=as_jpeg)

    async def download(self, manga_slug: str, chapter_slug: str) -> Download | None:
        """The chapter's original file, when its source offers one; remembered for half a
        link's life, so feeds listing many chapters ask the source once in a while."""
        _check_chapter(manga_slug, chapter_slug)
        access = await self.access()
        ctx = self.context(access)

        async def compute() -> Download | None:
            async with self.deadline():
                return await self.source.download(manga_slug, chapter_slug, ctx)

        key = self._key(manga_slug, chapter_slug, access=access)
        async with self.deadline():
            return await self.collaborators.cache.get_or_compute("download", key, compute)

    async def filter_values(self, key: FilterKey) -> list[str]:
        """Every value the source's ``key`` text filter can match, when the source knows them all
        (a library's index): Komga's clients offer publishers and authors as lists to pick
        from, and the spec's configuration declares tags only. Only for a caller let in."""
        await self.access()
        async with self.deadline():
            return await self.source.filter_values(key)

    async def image(self, url: str, *, width: int | None = None, as_jpeg: bool = False) -> Picture:
        """The image at ``url`` (one of the source's pages or covers) through the core's image
        pipeline: in a format every reader shows (JPEG when ``as_jpeg``), at most ``width`` wide.
        Only for a caller the visit lets in, whether or not the source reads the image itself."""
        await self.access()
        images = self.collaborators.images()
        return await images.render(self, url, width=width, as_jpeg=as_jpeg)

    # -- keys ------------------------------------------------------------------------

    def _key(self, *parts: Hashable, access: Access) -> tuple[Hashable, ...]:
        # What an adapter returns may depend on the credentials and, for links back to the
        # host, on the address it was reached at: both are part of the key, and the source's
        # generation, so a changed source is asked afresh at once.
        generation = self.collaborators.cache.generation(self.slug)
        return (self.slug, generation, *parts, access.key, self.caller.base_url)

    async def _content(
        self,
        kind: str,
        key: tuple[Hashable, ...],
        access: Access,
        compute: Callable[[], Awaitable[T]],
    ) -> Answer[T]:
        async with self.deadline():
            answer = await cached_answer(
                self.collaborators.cache,
                kind,
                self._key(*key, access=access),
                compute,
                source=self.slug,
            )
        if access.key and not answer.private:
            return Answer(answer.value, answer.body, private=True)
        return answer


def _check_chapter(manga_slug: str, chapter_slug: str) -> None:
    check_slug(manga_slug, MangaNotFound)
    check_slug(chapter_slug, ChapterNotFound)
