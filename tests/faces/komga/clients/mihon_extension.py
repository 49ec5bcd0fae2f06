"""Mihon's Komga extension: the requests it makes, over :mod:`.mihon_extension_models`.

Written from keiyoushi/extensions-source (snapshot fd4236e0, extension
``versionCode = 68``), ``src/all/komga/src/eu/kanade/tachiyomi/extension/all/komga/``:

- ``Komga.kt``: the requests (``searchMangaRequest`` builds every listing:
  ``search`` always present, even empty; ``page`` from 0; ``deleted=false``;
  filters from ``KomgaFilters.kt``; one ``sort``), which model decodes which
  answer (by the request URL: ``/api/v1/readlists`` or ``/api/v1/books``), the
  chapter list (``?unpaged=true&media_status=READY&deleted=false``, EPUBs
  dropped unless ``epubDivinaCompatible``, number = ``metadata.numberSort``,
  newest first), the page list (page ``number`` from 1, ``?convert=png`` for
  types outside ``SUPPORTED_IMAGE_TYPES``) and the filter options it loads
  (``fetchFilterOptions``).
- ``KomgaFilters.kt``: how each filter lands in the query: multi-selects
  comma-joined in one parameter (``genre=a,b``), read statuses repeated,
  one ``author=name,role`` per author; OkHttp's ``addQueryParameter`` encodes
  the comma (``%2C``).

Every listing and detail call goes through ``HttpSource``'s
``awaitSuccess``: a status outside 200-299 is an error the user sees
(:class:`~.okhttp_session.HttpError`). The filter options use ``await``
without that check, so a failed call shows as the "Failed to fetch
filtering options" header after three attempts.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from .kotlinx_json import KString, decode_as
from .mihon_extension_models import (
    DEFAULT_CHAPTER_NAME_TEMPLATE,
    SUPPORTED_IMAGE_TYPES,
    AuthorDto,
    BookDto,
    CollectionDto,
    LibraryDto,
    MangasPage,
    Page,
    PageDto,
    PageWrapperDto,
    ReadListDto,
    SChapter,
    SeriesDto,
    SManga,
    book_to_schapter,
    book_to_smanga,
    readlist_to_smanga,
    series_to_smanga,
)
from .okhttp_session import OkHttpClient, Response, http_url

# --- filters (KomgaFilters.kt) and the search request -----------------------

TYPE_SERIES, TYPE_READLISTS, TYPE_BOOKS = range(3)
SORTS = ("Relevance", "Alphabetically", "Date added", "Date updated", "Random")
STATUSES = ("Ongoing", "Ended", "Abandoned", "Hiatus")


@dataclass(frozen=True)
class Sort:
    """``Filter.Sort.Selection``: an index into :data:`SORTS` and a direction."""

    index: int
    ascending: bool


@dataclass(frozen=True)
class SearchFilters:
    """The state of the filter sheet, in the order ``getFilterList`` lays it out.

    ``None`` stands for "the extension's default list" (``filters.ifEmpty {
    getFilterList() }``). ``collection`` is a collection id (its entry in the
    "Collection" select), ``statuses`` the shown names (``"Ongoing"``...),
    ``authors`` (name, role) pairs in the order of their role groups.
    """

    unread: bool = False
    in_progress: bool = False
    read: bool = False
    type: int = TYPE_SERIES
    collection: str | None = None
    libraries: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    genres: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    publishers: tuple[str, ...] = ()
    authors: tuple[tuple[str, str], ...] = ()
    sort: Sort | None = Sort(0, True)
    has_library_filter: bool = field(default=True, repr=False)


def _search_url(
    base_url: str, page: int, query: str, filters: SearchFilters, default_libraries: Sequence[str]
) -> str:
    if filters.collection is not None:
        path = f"collections/{filters.collection}/series"
    else:
        path = {TYPE_READLISTS: "readlists", TYPE_BOOKS: "books"}.get(filters.type, "series")
    params: list[tuple[str, str]] = [
        ("search", query),
        ("page", str(page - 1)),
        ("deleted", "false"),
    ]
    if not filters.has_library_filter and default_libraries:
        params.append(("library_id", ",".join(default_libraries)))
    if filters.unread:
        params += [("read_status", "UNREAD"), ("read_status", "IN_PROGRESS")]
    if filters.in_progress:
        params.append(("read_status", "IN_PROGRESS"))
    if filters.read:
        params.append(("read_status", "READ"))
    for name, values in (
        ("library_id", filters.libraries),
        ("status", tuple(status.upper() for status in filters.statuses)),
        ("genre", filters.genres),
        ("tag", filters.tags),
        ("publisher", filters.publishers),
    ):
        if values:
            params.append((name, ",".join(values)))
    params += [("author", f"{name},{role}") for name, role in filters.authors]
    if filters.sort is not None and 0 <= filters.sort.index < len(SORTS):
        criteria = (
            "relevance",
            "metadata.titleSort" if path == "series" else "name",
            "createdDate",
            "lastModifiedDate",
            "random",
        )
        direction = "asc" if filters.sort.ascending else "desc"
        params.append(("sort", f"{criteria[filters.sort.index]},{direction}"))
    return http_url(f"{base_url}/api/v1", path.split("/"), params)


@dataclass(frozen=True)
class FilterOptions:
    """What ``fetchFilterOptions`` loads for the filter sheet."""

    libraries: list[LibraryDto]
    collections: list[CollectionDto]
    genres: frozenset[str]
    tags: frozenset[str]
    publishers: frozenset[str]
    authors: dict[str, list[AuthorDto]]


class MihonKomgaSource:
    """One configured Komga source of the extension, over an :class:`OkHttpClient`.

    ``base_url`` is the address the user typed (the extension refuses one
    ending in ``/``). The client carries the extension's authenticator and the
    app's shared cookie jar (:func:`~.okhttp_session.MihonNetwork.extension_client`).
    """

    def __init__(
        self,
        client: OkHttpClient,
        base_url: str,
        *,
        default_libraries: Sequence[str] = (),
        chapter_name_template: str = DEFAULT_CHAPTER_NAME_TEMPLATE,
    ) -> None:
        if base_url.endswith("/"):
            raise ValueError("The URL is invalid, malformed, or ends with a slash")
        self.client = client
        self.base_url = base_url
        self.default_libraries = tuple(default_libraries)
        self.chapter_name_template = chapter_name_template

    async def _get(self, url: str, *, accept: str | None = None) -> Response:
        headers = {"Accept": accept} if accept else {}
        return await self.client.request("GET", url, headers=headers, check=True)

    def _series_page(self, response: Response) -> MangasPage:
        url = str(response.url)
        if "/api/v1/readlists" in url:
            readlists = PageWrapperDto[ReadListDto].decode(response.content)
            return MangasPage(
                [readlist_to_smanga(item, self.base_url) for item in readlists.content],
                not readlists.last,
            )
        if "/api/v1/books" in url:
            books = PageWrapperDto[BookDto].decode(response.content)
            return MangasPage(
                [book_to_smanga(item, self.base_url) for item in books.content], not books.last
            )
        series = PageWrapperDto[SeriesDto].decode(response.content)
        return MangasPage(
            [series_to_smanga(item, self.base_url) for item in series.content], not series.last
        )

    def search_url(self, page: int, query: str, filters: SearchFilters | None) -> str:
        """The URL ``searchMangaRequest`` builds; ``filters=None`` is the default filter sheet."""
        if filters is None:
            filters = SearchFilters(libraries=self.default_libraries)
        return _search_url(self.base_url, page, query, filters, self.default_libraries)

    async def popular(self, page: int) -> MangasPage:
        filters = SearchFilters(sort=Sort(1, True), has_library_filter=False)
        return self._series_page(await self._get(self.search_url(page, "", filters)))

    async def latest(self, page: int) -> MangasPage:
        filters = SearchFilters(sort=Sort(3, False), has_library_filter=False)
        return self._series_page(await self._get(self.search_url(page, "", filters)))

    async def search(
        self, page: int, query: str, filters: SearchFilters | None = None
    ) -> MangasPage:
        return self._series_page(await self._get(self.search_url(page, query, filters)))

    async def manga_details(self, manga_url: str) -> SManga:
        response = await self._get(manga_url)
        if "/api/v1/readlists" in str(response.url):
            return readlist_to_smanga(ReadListDto.decode(response.content), self.base_url)
        if "/api/v1/books" in str(response.url):
            return book_to_smanga(BookDto.decode(response.content), self.base_url)
        return series_to_smanga(SeriesDto.decode(response.content), self.base_url)

    async def series_details(self, series_id: str) -> SManga:
        return await self.manga_details(f"{self.base_url}/api/v1/series/{series_id}")

    async def chapter_list(self, manga_url: str) -> list[SChapter]:
        """``chapterListRequest`` + ``chapterListParse`` for a series, read list or book URL."""
        template = self.chapter_name_template
        if "/api/v1/books" in manga_url:
            response = await self._get(f"{manga_url}?unpaged=true&media_status=READY&deleted=false")
            book = BookDto.decode(response.content)
            return [book_to_schapter(book, self.base_url, 1.0, template, from_readlist=True)]
        response = await self._get(
            f"{manga_url}/books?unpaged=true&media_status=READY&deleted=false"
        )
        from_readlist = "/api/v1/readlists" in str(response.url)
        books = [
            book
            for book in PageWrapperDto[BookDto].decode(response.content).content
            if book.media.mediaProfile != "EPUB" or book.media.epubDivinaCompatible
        ]
        chapters = [
            book_to_schapter(
                book,
                self.base_url,
                float(index + 1) if from_readlist else book.metadata.numberSort,
                template,
                from_readlist,
            )
            for index, book in enumerate(books)
        ]
        return sorted(chapters, key=lambda chapter: chapter.chapter_number, reverse=True)

    async def chapters(self, series_id: str) -> list[SChapter]:
        return await self.chapter_list(f"{self.base_url}/api/v1/series/{series_id}")

    async def page_list(self, chapter_url: str) -> list[Page]:
        response = await self._get(f"{chapter_url}/pages")
        pages = decode_as(list[PageDto], response.content)
        return [
            Page(
                page.number,
                f"{response.url}/{page.number}"
                + ("" if page.mediaType in SUPPORTED_IMAGE_TYPES else "?convert=png"),
            )
            for page in pages
        ]

    async def pages(self, book_id: str) -> list[Page]:
        return await self.page_list(f"{self.base_url}/api/v1/books/{book_id}")

    async def page_image(self, url: str) -> Response:
        """``imageRequest``: the page's URL with ``Accept: image/*,*/*;q=0.8``; the bytes are the page."""
        return await self._get(url, accept="image/*,*/*;q=0.8")

    async def filter_lists(self) -> FilterOptions:
        """``fetchFilterOptions``: six calls in turn; any failure leaves the sheet without options."""
        base = self.base_url

        async def body(path: str) -> bytes:
            return (await self.client.request("GET", f"{base}{path}")).content

        libraries = decode_as(list[LibraryDto], await body("/api/v1/libraries"))
        collections = (
            PageWrapperDto[CollectionDto]
            .decode(await body("/api/v1/collections?unpaged=true"))
            .content
        )
        genres = decode_as(frozenset[KString], await body("/api/v1/genres"))
        tags = decode_as(frozenset[KString], await body("/api/v1/tags"))
        publishers = decode_as(frozenset[KString], await body("/api/v1/publishers"))
        authors: dict[str, list[AuthorDto]] = {}
        for author in decode_as(list[AuthorDto], await body("/api/v1/authors")):
            authors.setdefault(author.role, []).append(author)
        return FilterOptions(libraries, collections, genres, tags, publishers, authors)

    @staticmethod
    def manga_web_url(manga_url: str) -> str:
        """``getMangaUrl``: the address "Open in WebView" opens for a series, read list or book."""
        return manga_url.replace("/api/v1", "")

    @staticmethod
    def chapter_web_url(chapter_url: str) -> str:
        """``getChapterUrl``: Komga's web reader page of the book."""
        return chapter_url.replace("/api/v1/books", "/book")
