"""The OPDS source: another server's catalogue (Komga, Kavita, Codex, calibre...) as a source.

This module wires the pieces: :mod:`.catalogue` fetches and parses pages,
:mod:`.discovery` reads what the root offers, :mod:`.refs` makes slugs,
:mod:`.mapping` makes the spec's objects, :mod:`.archives` keeps downloaded
books (comic archives, PDFs, EPUBs of page images), :mod:`.accounts` says whose
credentials each request carries, and the routes here serve covers and pages
through the host with those credentials. Pagination is followed lazily: a
search reads only as many upstream pages as its page of results needs.
"""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import ClassVar

from cachetools import TTLCache
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from toshokan.sdk import (
    AuthConfig,
    AuthType,
    Chapter,
    ChapterNotFound,
    Credentials,
    Entry,
    Filters,
    HostError,
    HostServices,
    InvalidCredentials,
    Manga,
    MangaNotFound,
    NotFound,
    Picture,
    Preset,
    RequestContext,
    SearchConfig,
    SearchRequest,
    SearchResponse,
    SortOption,
    Source,
    SourceConfiguration,
    Tag,
    UpstreamError,
    UpstreamTimeout,
    archives,
)
from toshokan.sources.opds import mapping
from toshokan.sources.opds.accounts import Account, Accounts
from toshokan.sources.opds.archives import ArchiveCache, Download, readable
from toshokan.sources.opds.catalogue import Catalogue
from toshokan.sources.opds.discovery import (
    Offer,
    browse_target,
    filter_facets,
    pick_shelf,
    search_feed,
    shelves_of,
    sort_facets,
)
from toshokan.sources.opds.feed import Feed, FeedEntry
from toshokan.sources.opds.links import Signer
from toshokan.sources.opds.refs import MangaRef, Refs, chapter_slug
from toshokan.sources.opds.settings import Settings

log = logging.getLogger("toshokan.sources.opds")

#: Longest the host's start waits for a catalogue's root.
STARTUP_SECONDS = 10.0
#: Largest image passed through from the catalogue.
MAX_IMAGE_BYTES = 48 * 1024 * 1024


class Opds(Source[Settings]):
    """An OPDS 1.2 (with page streaming) or OPDS 2.0 catalogue."""

    version: ClassVar[str] = "1.0.0"
    summary: ClassVar[str] = "Another server's OPDS catalogue (Komga, Kavita, Codex, calibre...)"

    def __init__(self, slug: str, settings: Settings, services: HostServices):
        super().__init__(slug, settings, services)
        client = services.http_client(rate_per_second=settings.requests_per_second)
        self.catalogue = Catalogue(slug, settings, client)
        self.refs = Refs(settings.root_url(), settings.api_key.get_secret_value())
        self.signer = Signer(services.secret, slug)
        self.accounts = Accounts(settings, services, slug)
        folder = services.data_dir / "opds" / slug
        self.archives = ArchiveCache(
            folder / "books",
            capacity=settings.archive_cache_mb * 1024 * 1024,
            max_file=settings.max_archive_mb * 1024 * 1024,
            renders=archives.DiskCache(
                folder / "renders", settings.render_cache_mb * 1024 * 1024, suffix=".jpg"
            ),
        )
        self._client = client
        self.offer = Offer()
        self._discovered = False
        self._discovery = asyncio.Lock()
        #: What listings said about a work (summary, cover), by manga slug, for its details.
        self._about: TTLCache[str, FeedEntry] = TTLCache(maxsize=4096, ttl=3600)

    # -- declaration -------------------------------------------------------------

    async def startup(self) -> None:
        """Read the catalogue's root, briefly: a catalogue that is down never holds the host up.

        Where readers sign in, the root is tried without an account: a catalogue that
        answers it anyway would accept any reader's credentials, which the log says."""
        try:
            async with asyncio.timeout(STARTUP_SECONDS):
                await self.discover(self.accounts.operator)
        except InvalidCredentials:
            log.info("source %s: the catalogue is read once a reader signs in", self.slug)
        except (HostError, TimeoutError) as error:  # the host serves on; the next search retries
            reason = error.message if isinstance(error, HostError) else "no answer in time"
            log.warning("source %s: catalogue not read at start-up: %s", self.slug, reason)
        else:
            if self.accounts.readers_sign_in:
                log.warning(
                    "source %s: auth = 'basic', but the catalogue answers without an account, "
                    "so it will accept any reader's name and password",
                    self.slug,
                )

    async def discover(self, account: Account) -> Offer:
        """Read the root once (as the first account that asks); until that succeeds, every
        search tries again."""
        if self._discovered:
            return self.offer
        async with self._discovery:
            if self._discovered:
                return self.offer
            root = await self.catalogue.page(self.catalogue.root, account)
            offer = Offer(shelves=shelves_of(root))
            offer.browse = browse_target(root, offer.shelves, self.settings.browse)
            offer.search_template = await self.catalogue.search_template(root, account)
            try:
                browsed = (
                    root
                    if offer.browse == root.url
                    else await self.catalogue.page(offer.browse, account)
                )
                # A shelf of shelves (a catalogue of catalogues, such as another toshokan's
                # sources): go down to the one that lists everything, when one says so.
                for _ in range(2):
                    deeper = None if browsed.books else pick_shelf(shelves_of(browsed))
                    if deeper is None:
                        break
                    offer.browse, browsed = deeper, await self.catalogue.page(deeper, account)
            except HostError as error:
                self.catalogue.warn(f"the feed to browse cannot be read: {error.message}")
            else:
                if offer.search_template is None:
                    offer.search_template = await self.catalogue.search_template(browsed, account)
                offer.sorts += [s for s in sort_facets(browsed) if s not in offer.sorts]
                offer.facet_tags, offer.statuses = filter_facets(browsed, set(offer.shelves))
            self.offer = offer
            self._discovered = True
            self.content_changed()
            return offer

    def configuration(self) -> SourceConfiguration:
        offer = self.offer
        tags = [Tag(slug=shelf.slug, name=shelf.title) for shelf in offer.tags().values()]
        filters = (["includeTag"] if tags else []) + (["status"] if offer.statuses else [])
        presets = [
            Preset(
                name=shelf.title,
                description=shelf.summary[:200] or f"Browse {shelf.title}.",
                request=SearchRequest(
                    page=1,
                    sort=SortOption.RELEVANCE,
                    filters=Filters(includeTag=[shelf.slug]),
                ),
            )
            for shelf in offer.shelves.values()
        ]
        return SourceConfiguration(
            name=self.settings.name,
            slug=self.slug,
            icon=self.settings.icon or f"{self.refs.origin}/favicon.ico",
            url=self.refs.origin,
            languages=list(self.settings.languages),
            nsfw=self.settings.nsfw,
            search=SearchConfig(sort=list(offer.sorts), filters=filters, tags=tags),
            presets=presets,
            auth=AuthConfig(type=AuthType.BASIC, required=True)
            if self.accounts.readers_sign_in
            else AuthConfig(),
            version=self.version,
        )

    def routes(self) -> Sequence[BaseRoute]:
        return [
            Route("/img/{who}/{code}/{sig}", self.image, methods=["GET"], name="image"),
            Route(
                "/book/{who}/{code}/{number}/{sig}", self.book_page, methods=["GET"], name="book"
            ),
        ]

    async def ping(self) -> None:
        try:
            await self.catalogue.get(self.catalogue.root, self.accounts.operator)
        except InvalidCredentials:  # it answered, asking for the account each reader brings
            if not self.accounts.readers_sign_in:
                raise

    async def verify_credentials(self, credentials: Credentials) -> bool:
        """A reader's name and password are good when the catalogue shows them its root."""
        if not (self.accounts.readers_sign_in and credentials.type is AuthType.BASIC):
            return await super().verify_credentials(credentials)
        try:
            await self.catalogue.page(self.catalogue.root, self.accounts.reader(credentials))
        except InvalidCredentials:
            return False
        return True

    # -- the four questions, each answered within one deadline -------------------

    @contextlib.asynccontextmanager
    async def _deadline(self) -> AsyncIterator[None]:
        """Every upstream request of one answer (a long series is several pages) under one limit."""
        seconds = self.settings.answer_seconds
        try:
            async with asyncio.timeout(seconds):
                yield
        except TimeoutError:
            raise UpstreamTimeout(f"The catalogue did not answer within {seconds:g} s.") from None

    async def search(self, request: SearchRequest, ctx: RequestContext) -> SearchResponse:
        async with self._deadline():
            return await self._search(request, ctx, await self.accounts.of(ctx))

    async def manga(self, manga_slug: str, ctx: RequestContext) -> Manga:
        async with self._deadline():
            return await self._manga(manga_slug, ctx, await self.accounts.of(ctx))

    async def chapters(self, manga_slug: str, ctx: RequestContext) -> list[Chapter]:
        async with self._deadline():
            return await self._chapters(manga_slug, await self.accounts.of(ctx))

    async def pages(self, manga_slug: str, chapter_slug: str, ctx: RequestContext) -> list[str]:
        async with self._deadline():
            return await self._pages(manga_slug, chapter_slug, ctx, await self.accounts.of(ctx))

    # -- search ------------------------------------------------------------------

    async def _search(
        self, request: SearchRequest, ctx: RequestContext, account: Account
    ) -> SearchResponse:
        offer = await self.discover(account)
        url = await self._start(offer, request, account)
        wanted = request.offset + request.limit + 1
        found: list[Entry] = []
        async for feed in self.catalogue.pages(url, account):
            for entry in feed.entries:
                result = self._entry(ctx, account, entry, feed)
                if result is not None:
                    found.append(result)
            if len(found) >= wanted:
                break
        window = found[request.offset : request.offset + request.limit]
        return SearchResponse(results=window, page=request.page, more=len(found) >= wanted)

    async def _start(self, offer: Offer, request: SearchRequest, account: Account) -> str:
        url = search_feed(offer, request)
        if not request.query.strip() and request.sort != SortOption.RELEVANCE:
            first = await self.catalogue.page(url, account)
            url = sort_facets(first).get(request.sort, url)
        return url

    def _entry(
        self, ctx: RequestContext, account: Account, entry: FeedEntry, feed: Feed
    ) -> Entry | None:
        if entry.is_book:
            ref = MangaRef(feed=feed.url, book_id=entry.id)
        elif entry.feed is not None and entry.feed != self.catalogue.root:
            ref = MangaRef(feed=entry.feed)
        else:
            return None
        slug = self.refs.manga_slug(entry.title, ref)
        if slug is None:
            return None
        self._about[slug] = entry
        cover = self._image(ctx, account, entry.thumbnail or entry.cover)
        # What the listing says of the title, for faces that describe list items.
        details = mapping.manga(
            slug=slug,
            url=self.settings.redact(entry.page or ref.feed),
            title=entry.title,
            about=entry,
            books=[],
            cover=cover,
            updated=entry.updated,
        )
        return Entry(slug=slug, title=entry.title, cover=cover, details=details)

    # -- details and chapters ----------------------------------------------------

    def _ref(self, manga_slug: str) -> MangaRef:
        ref = self.refs.manga_ref(manga_slug)
        if ref is None:
            raise MangaNotFound()
        return ref

    async def _books(
        self, ref: MangaRef, account: Account, *, first_page_only: bool = False
    ) -> tuple[Feed, list[FeedEntry]]:
        """The series' feed (its first page) and its books (a lone book: just that one).

        A series whose feed lists no books but links to one feed per chapter (as
        toshokan's own OPDS face does) has those entries as its books; each one's
        pages are in the first book of the feed it links to.
        """
        first: Feed | None = None
        books: list[FeedEntry] = []
        linked: list[FeedEntry] = []
        async for feed in self.catalogue.pages(ref.feed, account, not_found=MangaNotFound):
            first = first or feed
            if ref.book_id is not None:
                books = [b for b in feed.books if b.id == ref.book_id]
                if books:
                    break
            else:
                books.extend(feed.books)
                linked.extend(e for e in feed.entries if not e.is_book and e.feed is not None)
                if first_page_only:
                    break
        assert first is not None
        if ref.book_id is not None and not books:
            raise MangaNotFound("The catalogue no longer lists this book where it was found.")
        return first, books or linked

    async def _readable(self, book: FeedEntry, account: Account) -> FeedEntry:
        """The book itself, or for a chapter that is a link, the first book of its feed."""
        if book.is_book or book.feed is None:
            return book
        feed = await self.catalogue.page(book.feed, account, not_found=ChapterNotFound)
        if not feed.books:
            raise ChapterNotFound("The catalogue lists no book under this chapter.")
        return feed.books[0]

    async def _manga(self, manga_slug: str, ctx: RequestContext, account: Account) -> Manga:
        ref = self._ref(manga_slug)
        first, books = await self._books(ref, account, first_page_only=True)
        about = self._about.get(manga_slug) or (books[0] if ref.book_id else None)
        title = (about.title if about else "") or first.title or "Unknown Title"
        cover = next(
            (
                e.cover or e.thumbnail
                for e in ([about] if about else []) + books
                if e.cover or e.thumbnail
            ),
            first.icon,
        )
        page = (about.page if about else None) or ref.feed
        return mapping.manga(
            slug=manga_slug,
            url=self.settings.redact(page),
            title=title,
            about=about,
            books=books,
            cover=self._image(ctx, account, cover),
            updated=first.updated,
        )

    async def _chapters(self, manga_slug: str, account: Account) -> list[Chapter]:
        ref = self._ref(manga_slug)
        _, books = await self._books(ref, account)
        return [
            mapping.chapter(
                book,
                slug=chapter_slug(book.title, book.id),
                url=self.settings.redact(book.page or ref.feed),
                position=position,
                language=self.settings.languages[0],
                scanlator=self.settings.name,
            )
            for position, book in enumerate(books, start=1)
        ]

    # -- pages ---------------------------------------------------------------------

    async def _pages(
        self, manga_slug: str, chapter_slug_: str, ctx: RequestContext, account: Account
    ) -> list[str]:
        ref = self._ref(manga_slug)
        _, books = await self._books(ref, account)
        book = next((b for b in books if chapter_slug(b.title, b.id) == chapter_slug_), None)
        if book is None:
            raise ChapterNotFound()
        book = await self._readable(book, account)
        if book.stream is not None:
            width = str(self.settings.page_max_width)
            template = book.stream.template.replace("{maxWidth}", width)
            return [
                self._image(ctx, account, template.replace("{pageNumber}", str(n))) or ""
                for n in range(book.stream.count)
            ]
        download = readable(book.acquisitions)
        if download is None:
            raise ChapterNotFound(
                "The catalogue offers this book neither streamed nor as a download."
            )
        code = self.refs.encode(download.href)
        if code is None:
            raise UpstreamError("The catalogue links this book's download to another server.")
        with self.catalogue.mapped(account):
            members = await self.archives.pages(download.href, self._download(account))
        who = account.key
        return [
            self.url_for(
                ctx, "book", who=who, code=code, number=n, sig=self.signer.sign(code, who, str(n))
            )
            for n in range(1, len(members) + 1)
        ]

    def _image(self, ctx: RequestContext, account: Account, url: str | None) -> str | None:
        """A link through the host to an image on the catalogue's server, fetched with
        ``account``'s credentials (images elsewhere are linked as they are)."""
        if not url:
            return None
        code = self.refs.encode(url)
        if code is None:
            return url if url.startswith(("http://", "https://")) else None
        who = account.key
        return self.url_for(ctx, "image", who=who, code=code, sig=self.signer.sign(code, who))

    def _download(self, account: Account) -> Download:
        """Downloads of books with ``account``'s credentials."""

        async def download(url: str, dest: Path, max_bytes: int) -> int:
            return await self._client.download(url, dest, max_bytes=max_bytes, auth=account.auth)

        return download

    # -- routes ----------------------------------------------------------------------

    async def _linked(self, who: str) -> Account:
        account = await self.accounts.named(who)
        if account is None:  # signed by us, but its reader's sign-in is no longer known here
            raise NotFound("This link has expired; open the chapter again.")
        return account

    async def image(self, request: Request) -> Response:
        picture = await self._catalogue_image(**request.path_params)
        return Response(picture.data, media_type=picture.media_type, headers=_IMAGE_HEADERS)

    async def book_page(self, request: Request) -> Response:
        picture = await self._book_page(**request.path_params)
        return Response(picture.data, media_type=picture.media_type, headers=_IMAGE_HEADERS)

    async def read_image(self, path: str, ctx: RequestContext) -> Picture | None:
        """Covers and pages, read by the code their routes serve them with."""
        route, params = self.own_route(path) or ("", {})
        if route == "image":
            return await self._catalogue_image(**params)
        return await self._book_page(**params) if route == "book" else None

    async def _catalogue_image(self, who: str, code: str, sig: str) -> Picture:
        decoded = self.refs.decode(code) if self.signer.check(sig, code, who) else None
        if decoded is None:
            raise NotFound("No image is at this path.")
        response = await self.catalogue.get(decoded[0], await self._linked(who))
        if len(response.content) > MAX_IMAGE_BYTES:
            raise UpstreamError("The catalogue sent an image too large to pass on.")
        kind = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if not kind.startswith("image/"):
            kind = archives.sniff_media_type(response.content[:16]) or ""
            if not kind:
                raise UpstreamError("The catalogue sent something that is not an image.")
        return Picture(response.content, kind)

    async def _book_page(self, who: str, code: str, number: str, sig: str) -> Picture:
        valid = number.isdigit() and len(number) <= 6 and self.signer.check(sig, code, who, number)
        decoded = self.refs.decode(code) if valid else None
        if decoded is None:
            raise NotFound("No page is at this path.")
        account = await self._linked(who)
        with self.catalogue.mapped(account):
            try:
                data, kind = await self.archives.page(
                    decoded[0], int(number), self._download(account)
                )
            except IndexError:
                raise NotFound("The book has no page with this number.") from None
        return Picture(data, kind)


_IMAGE_HEADERS = {"Cache-Control": "private, max-age=86400"}
