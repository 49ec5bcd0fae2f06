"""The MangaDex source: the spec's four questions answered from api.mangadex.org.

This module wires the pieces together (settings, request building in
:mod:`.api`, the typed payloads in :mod:`.payloads`, mapping them in
:mod:`.mapping`, the bounded feed in
:mod:`.feed`, the shared rate limits in :mod:`.limits`) and owns the parts
that need state: the upstream clients and the author-name cache.

Being a good citizen of MangaDex: the host's honest User-Agent (never a
browser's), one limiter per process for the API's ~5 requests/second and
another for ``/at-home/server``'s 40/minute, 429s answered by waiting the
API's retry hint (or, when it is long, passing it on as RATE_LIMITED and
sending nothing more until it expires), and no request sent that the API
would refuse (offsets past its 10,000 window, ids that are not UUIDs).
"""

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar, TypeVar

import click
import httpx
from cachetools import TTLCache
from pydantic import TypeAdapter

from toshokan.sdk import (
    AllOf,
    Chapter,
    ChapterNotFound,
    HostServices,
    ImageFetch,
    Listing,
    Manga,
    MangaNotFound,
    Preset,
    RequestContext,
    SearchConfig,
    SearchRequest,
    SearchResponse,
    SortOption,
    Source,
    SourceConfiguration,
    UpstreamError,
    clean_text,
    gather,
    newest_first,
    text_of,
)
from toshokan.sources.mangadex import api, mapping, payloads
from toshokan.sources.mangadex.feed import FetchPage, fetch_feed
from toshokan.sources.mangadex.limits import budgets
from toshokan.sources.mangadex.reports import TIMEOUT, AtHomeReports
from toshokan.sources.mangadex.settings import Settings
from toshokan.sources.mangadex.tags import TagCatalogue, shipped_catalogue

T = TypeVar("T")
#: Ratings that make the source nsfw when searched by default.
NSFW_RATINGS = frozenset({"erotica", "pornographic"})


@contextlib.contextmanager
def reading(what: str) -> Iterator[None]:
    """What the spec's models refuse in a well-shaped payload is UPSTREAM_ERROR, not a crash.

    Shapes are checked on arrival (:mod:`.payloads`); this guards the values
    the spec is stricter about, such as a language code that is not one.
    """
    try:
        yield
    except ValueError as error:
        raise UpstreamError(
            f"MangaDex sent {what} this adapter cannot read ({type(error).__name__})."
        ) from None


class MangaDex(Source[Settings]):
    """MangaDex, through its public JSON API."""

    version: ClassVar[str] = "1.0.0"
    summary: ClassVar[str] = "MangaDex (api.mangadex.org): scanlations in many languages"

    def __init__(self, slug: str, settings: Settings, services: HostServices):
        super().__init__(slug, settings, services)
        self.catalogue: TagCatalogue = shipped_catalogue()
        opts = settings
        # One budget per upstream address, shared by every request (and every MangaDex source)
        # of the process; page lists also draw on the stricter at-home budget (waited for first,
        # then taken at one moment with the API's, so each counts the request when it is sent).
        self._api_budget, self._at_home_budget = budgets(opts)
        self.client = services.http_client(
            opts.api_url, limiter=self._api_budget, error_detail=api.error_detail
        )
        # A long 429 hint from /at-home holds only the at-home budget.
        self.at_home = services.http_client(
            opts.api_url,
            limiter=AllOf(self._at_home_budget, self._api_budget),
            paused_by_hints=self._at_home_budget,
            error_detail=api.error_detail,
        )
        self._people: TTLCache[str, tuple[str, ...]] = TTLCache(maxsize=512, ttl=3600)
        # Reports go to MangaDex@Home's balancer, not the API: no budget, no retries.
        self.reports = AtHomeReports(
            services.http_client(timeout=TIMEOUT, retries=0),
            opts.report_url,
            {httpx.URL(url).host for url in (opts.api_url, opts.uploads_url)},
        )

    # -- lifecycle ---------------------------------------------------------------

    async def startup(self) -> None:
        await self.reports.start()

    async def shutdown(self) -> None:
        await self.reports.stop()

    def image_fetched(self, fetch: ImageFetch) -> None:
        """A page fetched from a MangaDex@Home node is reported, as MangaDex asks."""
        self.reports.note(fetch)

    # -- declaration -------------------------------------------------------------

    def configuration(self) -> SourceConfiguration:
        def preset(name: str, description: str, sort: SortOption) -> Preset:
            return Preset(
                name=name, description=description, request=SearchRequest(page=1, sort=sort)
            )

        return SourceConfiguration(
            name="MangaDex",
            slug=self.slug,
            icon="https://mangadex.org/favicon.ico",
            url="https://mangadex.org",
            referer="https://mangadex.org/",
            languages=list(self.settings.languages),
            nsfw=bool(NSFW_RATINGS & set(self.settings.content_ratings)),
            search=SearchConfig(
                sort=list(api.SORT_FIELDS),
                filters=list(api.FILTERS),
                tags=self.catalogue.spec_tags(),
            ),
            presets=[
                preset(
                    "Latest updates", "Titles with the newest chapters first.", SortOption.LATEST
                ),
                preset(
                    "Most followed", "The titles most MangaDex users follow.", SortOption.FOLLOWS
                ),
                preset("Top rated", "The best rated titles.", SortOption.RATING),
                preset("Recently added", "Titles newest to MangaDex first.", SortOption.CREATED_AT),
            ],
            version=self.version,
            # Fixed: the configuration changes when the adapter or its tag list does.
            updatedAt=self.catalogue.generated_at,
        )

    @classmethod
    def commands(cls) -> Sequence[click.Command]:
        from toshokan.sources.mangadex.commands import mangadex

        return (mangadex,)

    # -- content -----------------------------------------------------------------

    async def search(self, request: SearchRequest, ctx: RequestContext) -> SearchResponse:
        empty = SearchResponse(results=[], page=request.page, more=False)
        limit = api.window(request.offset, request.limit)
        if limit == 0:  # past MangaDex's result window: nothing it would serve
            return empty
        filters = request.filters
        authors = await self._person_ids(filters.author) if filters.author else ()
        artists = await self._person_ids(filters.artist) if filters.artist else ()
        if (filters.author and not authors) or (filters.artist and not artists):
            return empty  # nobody by that name, so no work by them either
        params = api.search_params(
            request,
            limit=limit,
            settings=self.settings,
            tags=self.catalogue,
            author_ids=authors,
            artist_ids=artists,
        )
        payload = await self.fetch("/manga", payloads.MANGA_LIST, "search results", params=params)
        with reading("search results"):
            results = [
                mapping.entry(
                    item,
                    preference=self.settings.title_languages,
                    uploads=self.settings.uploads_url,
                    catalogue=self.catalogue,
                )
                for item in payload["data"]
            ]
        total = payload["total"]
        return SearchResponse(
            results=results,
            page=request.page,
            more=api.has_more(request.offset, request.limit, total),
        )

    async def manga(self, manga_slug: str, ctx: RequestContext) -> Manga:
        if not api.is_uuid(manga_slug):
            raise MangaNotFound()
        details = self.fetch(
            f"/manga/{manga_slug}",
            payloads.MANGA_ONE,
            "title details",
            params=api.manga_params(),
            not_found=MangaNotFound,
        )
        covers = self.fetch(
            "/cover", payloads.COVER_LIST, "a cover list", params=api.covers_params(manga_slug)
        )
        found, cover_list = await gather(details, covers)
        item = found["data"]
        if item["id"] != manga_slug:
            raise UpstreamError("MangaDex answered with a different title than the one asked for.")
        with reading("title details"):
            return mapping.manga(
                item,
                cover_list["data"],
                preference=self.settings.title_languages,
                uploads=self.settings.uploads_url,
                catalogue=self.catalogue,
            )

    async def chapters(self, manga_slug: str, ctx: RequestContext) -> list[Chapter]:
        if not api.is_uuid(manga_slug):
            raise MangaNotFound()
        items = await fetch_feed(self.feed_page(manga_slug), manga_slug)
        if not items:
            await self._exists(manga_slug)
            return []
        return self._chapters(items)

    async def newest_chapters(self, manga_slug: str, ctx: RequestContext) -> Listing:
        """One request: the feed's newest page (500 chapters), whole for a series with fewer.

        An empty feed costs a second, to tell a series without chapters in the source's
        languages from one MangaDex no longer has.
        """
        if not api.is_uuid(manga_slug):
            raise MangaNotFound()
        page = await self.fetch(
            f"/manga/{manga_slug}/feed",
            payloads.FEED,
            "a chapter feed",
            params=api.newest_feed_params(self.settings),
            not_found=MangaNotFound,
        )
        items = page["data"]
        if not items:
            await self._exists(manga_slug)
        return Listing(self._chapters(items), complete=page["total"] <= len(items))

    async def marks(self, manga_slugs: Sequence[str], ctx: RequestContext) -> dict[str, str]:
        """One request for up to 100 titles: ``/manga?ids[]=``, each title's latest uploaded
        chapter (any language: a new one in another language costs a feed request that finds
        nothing). A title MangaDex does not list is left out, to be read in full."""
        found: dict[str, str] = {}
        ids = [slug for slug in manga_slugs if api.is_uuid(slug)]
        for start in range(0, len(ids), api.MANGA_PAGE_MAX):
            page = await self.fetch(
                "/manga",
                payloads.MANGA_LIST,
                "titles by id",
                params=api.marks_params(ids[start : start + api.MANGA_PAGE_MAX]),
            )
            for item in page["data"]:
                latest = item["attributes"].get("latestUploadedChapter")
                if latest:
                    found[item["id"]] = latest
        return found

    async def _exists(self, manga_slug: str) -> None:
        """MangaNotFound unless MangaDex has the title: an unknown id has an empty feed, not a 404."""
        await self.fetch(
            f"/manga/{manga_slug}", payloads.MANGA_ONE, "title details", not_found=MangaNotFound
        )

    def _chapters(self, items: list[payloads.ChapterItem]) -> list[Chapter]:
        chapters = []
        with reading("a chapter feed"):
            for item in items:
                attributes = item["attributes"]
                if attributes.get("isUnavailable"):
                    continue  # withdrawn from MangaDex: no pages anywhere
                if mapping.is_external(attributes) and self.settings.external_chapters == "exclude":
                    continue
                chapters.append(mapping.chapter(item))
        return newest_first(mapping.distinguish(chapters))

    async def pages(self, manga_slug: str, chapter_slug: str, ctx: RequestContext) -> list[str]:
        if not api.is_uuid(manga_slug):
            raise MangaNotFound()
        if not api.is_uuid(chapter_slug):
            raise ChapterNotFound()
        # The chapter is checked first (cheap, general budget) so a wrong pair never
        # spends one of the 40 at-home requests a minute.
        chapter = await self.fetch(
            f"/chapter/{chapter_slug}", payloads.CHAPTER_ONE, "a chapter", not_found=ChapterNotFound
        )
        item = chapter["data"]
        owners = {r["id"] for r in mapping.relationships(item, "manga")}
        attributes = item["attributes"]
        if manga_slug not in owners:
            raise ChapterNotFound("This chapter does not belong to this manga.")
        if mapping.is_external(attributes):
            where = attributes.get("externalUrl") or mapping.chapter_url(chapter_slug)
            raise ChapterNotFound(f"This chapter is hosted off-site and has no pages here: {where}")
        if attributes.get("isUnavailable"):
            raise ChapterNotFound("This chapter is no longer available on MangaDex.")
        server = await self.fetch(
            f"/at-home/server/{chapter_slug}",
            payloads.AT_HOME,
            "a page list",
            at_home=True,
            not_found=ChapterNotFound,
        )
        base = server["baseUrl"].rstrip("/")
        info = server["chapter"]
        quality, files = (
            ("data-saver", info["dataSaver"])
            if self.settings.data_saver
            else ("data", info["data"])
        )
        return [f"{base}/{quality}/{info['hash']}/{name}" for name in files]

    async def ping(self) -> None:
        response = await self.client.request("GET", "/ping")
        answer = text_of(response).strip()
        if answer != "pong":
            raise UpstreamError(
                f"MangaDex's /ping answered {clean_text(answer, 50)!r}, not 'pong'."
            )

    # -- helpers -----------------------------------------------------------------

    def feed_page(self, manga_id: str) -> FetchPage:
        """How :func:`fetch_feed` asks for one page of ``manga_id``'s chapters."""

        async def page(offset: int, limit: int) -> payloads.Feed:
            return await self.fetch(
                f"/manga/{manga_id}/feed",
                payloads.FEED,
                "a chapter feed",
                params=api.feed_params(self.settings, offset, limit),
                not_found=MangaNotFound,
            )

        return page

    async def fetch(
        self, path: str, shape: TypeAdapter[T], what: str, *, at_home: bool = False, **options: Any
    ) -> T:
        """GET a payload of ``shape`` within the budgets (page lists: the at-home one too)."""
        client = self.at_home if at_home else self.client
        return await client.get_payload(path, shape, f"MangaDex {what}", **options)

    async def _person_ids(self, name: str) -> tuple[str, ...]:
        """MangaDex ids for an author/artist name: exact matches, else the best match.

        MangaDex filters works by person id, and its name search is fuzzy;
        exact (case-insensitive) matches are trusted, otherwise its top hit.
        """
        key = name.strip().casefold()
        if not key:
            return ()
        if key in self._people:
            return self._people[key]
        payload = await self.fetch(
            "/author",
            payloads.PERSON_LIST,
            "author search results",
            params=api.author_params(name.strip()),
        )
        found = [(p["id"], p["attributes"]["name"]) for p in payload["data"]]
        exact = tuple(pid for pid, pname in found if pname.strip().casefold() == key)
        ids = exact or tuple(pid for pid, _ in found[:1])
        self._people[key] = ids
        return ids
