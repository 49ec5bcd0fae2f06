"""An in-memory adapter for testing the host: every behaviour a real source can show."""

import asyncio
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel, ConfigDict

from toshokan.errors import ChapterNotFound, MangaNotFound, UpstreamError
from toshokan.models import (
    AuthConfig,
    AuthType,
    Chapter,
    Entry,
    FilterKey,
    Manga,
    Preset,
    ReadingDirection,
    SearchConfig,
    SearchRequest,
    SearchResponse,
    SortOption,
    SourceConfiguration,
    Tag,
)
from toshokan.sdk import Credentials, HostServices, RequestContext, Source

BASE = datetime(2024, 1, 1, tzinfo=UTC)
SECRETS = {
    "username": "reader",
    "password": "s3cret-pass",
    "apiKey": "key-123456",
    "token": "tok-abcdef",
}


class CatalogSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    titles: int = 45
    auth: AuthType = AuthType.NONE
    required: bool = False
    delay: float = 0.0
    verify_delay: float = 0.0  # seconds checking credentials takes, as with an upstream
    #: How every title reads, as a source that knows says it (the manga's ``readingDirection``).
    reading_direction: ReadingDirection | None = None


class Catalog(Source):
    """Serves ``titles`` numbered works; counts every call so tests can see the cache."""

    Settings = CatalogSettings
    version = "1.2.3"
    summary = "in-memory test catalog"

    def __init__(self, slug: str, settings: BaseModel, services: HostServices):
        super().__init__(slug, settings, services)
        assert isinstance(settings, CatalogSettings)
        self.conf = settings
        self.calls: dict[str, int] = {}
        self.seen_auth: list[Mapping[str, str]] = []
        self.ping_error: Exception | None = None
        self.titles = [f"Title {i:03d}" for i in range(settings.titles)]

    def _count(self, name: str, ctx: RequestContext | None = None) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1
        if ctx is not None:
            self.seen_auth.append(dict(ctx.auth))

    def configuration(self) -> SourceConfiguration:
        return SourceConfiguration(
            name="Test Catalog",
            slug=self.slug,
            icon="https://catalog.example/icon.png",
            url="https://catalog.example",
            languages=["en", "ja"],
            auth=AuthConfig(type=self.conf.auth, required=self.conf.required),
            search=SearchConfig(
                sort=[SortOption.RELEVANCE, SortOption.TITLE, SortOption.LATEST],
                filters=[
                    FilterKey.INCLUDE_TAG,
                    FilterKey.EXCLUDE_TAG,
                    FilterKey.YEAR,
                    FilterKey.AUTHOR,
                    FilterKey.STATUS,
                ],
                tags=[
                    Tag(slug="action", name="Action"),
                    Tag(slug="romance", name="Romance"),
                    Tag(slug="gore", name="Gore", nsfw=True),
                ],
            ),
            presets=[
                Preset(
                    name="A to Z",
                    request=SearchRequest(page=1, sort=SortOption.TITLE, direction="asc"),
                ),
            ],
            updatedAt=BASE,
        )

    async def search(self, request: SearchRequest, ctx: RequestContext) -> SearchResponse:
        self._count("search", ctx)
        if self.conf.delay:
            await asyncio.sleep(self.conf.delay)
        matches = [t for t in self.titles if request.query.lower() in t.lower()]
        if request.direction == "asc":
            matches.sort()
        else:
            matches.sort(reverse=True)
        window = matches[request.offset : request.offset + request.limit + 1]
        results = [Entry(slug=_slug(t), title=t, cover=None) for t in window[: request.limit]]
        return SearchResponse(results=results, page=request.page, more=len(window) > request.limit)

    async def manga(self, manga_slug: str, ctx: RequestContext) -> Manga:
        self._count("manga", ctx)
        if self.conf.delay:
            await asyncio.sleep(self.conf.delay)
        if manga_slug == "crash":
            raise RuntimeError("adapter bug with internal detail /secret/path")
        if manga_slug == "flaky":
            raise UpstreamError("The upstream failed with HTTP 503: maintenance")
        title = self._title(manga_slug)
        return Manga(
            slug=manga_slug,
            url=f"https://catalog.example/{manga_slug}",
            title=title,
            tags=["action"],
            readingDirection=self.conf.reading_direction,
        )

    async def chapters(self, manga_slug: str, ctx: RequestContext) -> list[Chapter]:
        self._count("chapters", ctx)
        self._title(manga_slug)
        # Deliberately out of order: the host sorts newest first.
        return [
            Chapter(
                slug=f"c{n}",
                url=f"https://catalog.example/{manga_slug}/{n}",
                number=n,
                date=BASE + timedelta(days=n),
            )
            for n in (2, 5, 1, 4, 3)
        ] + [
            Chapter(
                slug="c5-alt",
                url="https://catalog.example/alt",
                number=5,
                date=BASE + timedelta(days=5),
                scanlator="Other",
            )
        ]

    async def pages(self, manga_slug: str, chapter_slug: str, ctx: RequestContext) -> list[str]:
        self._count("pages", ctx)
        self._title(manga_slug)
        if chapter_slug == "hosted":  # pages the host itself would serve: links built from base_url
            return [f"{ctx.base_url}/_/{self.slug}/pages/1"]
        if chapter_slug not in {"c1", "c2", "c3", "c4", "c5", "c5-alt"}:
            raise ChapterNotFound()
        return [
            f"https://img.catalog.example/{manga_slug}/{chapter_slug}/{i}.png" for i in range(1, 4)
        ]

    async def ping(self) -> None:
        self._count("ping")
        if self.ping_error:
            raise self.ping_error

    async def verify_credentials(self, credentials: Credentials) -> bool:
        self._count("verify")
        if self.conf.verify_delay:
            await asyncio.sleep(self.conf.verify_delay)
        match credentials.type:
            case AuthType.BASIC | AuthType.SESSION:
                return (
                    credentials.username == SECRETS["username"]
                    and credentials.password == SECRETS["password"]
                )
            case AuthType.API_KEY:
                return credentials.apiKey == SECRETS["apiKey"]
            case AuthType.BEARER:
                return credentials.token == SECRETS["token"]
            case AuthType.COOKIE:
                return credentials.cookie == "session=good"
        return False

    async def authenticate(self, credentials: Credentials) -> dict[str, str]:
        if credentials.type is AuthType.SESSION:
            if not await self.verify_credentials(credentials):
                from toshokan.errors import InvalidCredentials

                raise InvalidCredentials("Wrong username or password.")
            return {"Cookie": "session=good"}
        return await super().authenticate(credentials)

    async def authorize(self, auth: Mapping[str, str], credentials: Credentials | None) -> bool:
        if self.conf.auth is AuthType.SESSION:
            return auth.get("Cookie") == "session=good"
        return await super().authorize(auth, credentials)

    def _title(self, manga_slug: str) -> str:
        for title in self.titles:
            if _slug(title) == manga_slug:
                return title
        raise MangaNotFound()


def _slug(title: str) -> str:
    return title.lower().replace(" ", "-")


class BadPresetCatalog(Catalog):
    """Declares a preset that sorts by something the source does not support."""

    def configuration(self) -> SourceConfiguration:
        config = super().configuration()
        preset = Preset(name="Most viewed", request=SearchRequest(page=1, sort=SortOption.VIEWS))
        return SourceConfiguration.model_validate(
            {**config.model_dump(), "presets": [preset.model_dump()]}
        )
