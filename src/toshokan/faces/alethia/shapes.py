"""The app's objects, in exactly the keys it decodes, built from the core's answers.

The app (and its reference host's strict contract) refuses any key it does
not know, so these models list exactly the app's keys; dates are written in
the one form its decoder reads: UTC, second precision, ``Z``.
"""

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from toshokan.faces.alethia.keys import chapter_key
from toshokan.faces.alethia.vocabulary import (
    AUTH_TYPES,
    known_filters,
    known_sorts,
    translated_preset,
)
from toshokan.models import Chapter, Manga, SourceConfiguration, Tag

#: What a URL may hold to be one that Foundation's ``URL(string:)`` accepts as it is.
_URL_CHARACTERS = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})+")
#: The usual case, checked in one match: an http(s) URL with a host, in those characters.
_PLAIN_ABSOLUTE = re.compile(
    r"https?://[A-Za-z0-9][A-Za-z0-9\-._~!$&'()*+,;=:@\[\]]*"
    r"(?:[/?#](?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)?",
    re.IGNORECASE,
)
#: Characters ``quote`` leaves alone when repairing a URL: the reserved ones, and escapes.
_URL_SAFE = ":/?#[]@!$&'()*+,;=%~"


def app_date(value: datetime) -> str:
    """``2024-05-01T12:00:00Z``: the app's decoder refuses fractional seconds other than three."""
    moment = value.astimezone(UTC).replace(microsecond=0, tzinfo=None)
    return moment.isoformat() + "Z"


def absolute_url(url: str) -> str | None:
    """``url`` as an absolute http(s) URL the app can parse, repaired if needed; None if hopeless."""
    if _PLAIN_ABSOLUTE.fullmatch(url):
        return url
    candidate = url.strip()
    if not _URL_CHARACTERS.fullmatch(candidate):
        candidate = quote(candidate, safe=_URL_SAFE)
        if not _URL_CHARACTERS.fullmatch(candidate):
            return None
    parts = urlsplit(candidate)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return candidate


class AppModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AppAuth(AppModel):
    type: str
    required: bool


class AppSearch(AppModel):
    sort: list[str]
    filters: list[str]
    tags: list[Tag]


class AppPresetRequest(AppModel):
    query: str
    page: int
    limit: int
    sort: str
    direction: str
    filters: dict[str, Any] | None = None

    @model_serializer(mode="wrap")
    def _without_empty_filters(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Absent, not null: the reference contract's ``filters`` is optional, not nullable.
        data: dict[str, Any] = handler(self)
        if data.get("filters") is None:
            data.pop("filters", None)
        return data


class AppPreset(AppModel):
    name: str
    description: str
    request: AppPresetRequest


class AppSource(AppModel):
    name: str
    slug: str
    icon: str
    languages: list[str]
    nsfw: bool
    url: str
    referer: str
    auth: AppAuth
    search: AppSearch
    presets: list[AppPreset]


class AppHost(AppModel):
    name: str
    author: str
    repository: str
    sources: list[AppSource]


class AppManga(AppModel):
    slug: str
    url: str
    title: str
    alternativeTitles: list[str]
    authors: list[str]
    synopsis: str
    covers: list[str]
    tags: list[str]
    classification: str
    publication: str
    createdAt: str
    updatedAt: str


class AppChapter(AppModel):
    slug: str
    url: str
    title: str
    number: float
    date: str
    language: str
    scanlator: str


def app_source(config: SourceConfiguration) -> AppSource:
    """The source object: only the sorts, filters and presets the app can use."""
    search = config.search
    presets = []
    for preset in config.presets:
        translated = translated_preset(preset, search)
        if translated is None:
            continue
        request = translated.request
        filters = request.filters.given()
        presets.append(
            AppPreset(
                name=translated.name,
                description=translated.description,
                request=AppPresetRequest(
                    query=request.query,
                    page=request.page,
                    limit=request.limit,
                    sort=request.sort.value,
                    direction=request.direction,
                    filters=filters or None,
                ),
            )
        )
    return AppSource(
        name=config.name,
        slug=config.slug,
        icon=config.icon,
        languages=config.languages,
        nsfw=config.nsfw,
        url=config.url,
        referer=config.referer,
        auth=AppAuth(type=AUTH_TYPES[config.auth.type], required=config.auth.required),
        search=AppSearch(
            sort=[s.value for s in known_sorts(search)],
            filters=[f.value for f in known_filters(search)],
            tags=search.tags,
        ),
        presets=presets,
    )


def app_manga(manga: Manga, images: Callable[[list[str]], list[str]]) -> AppManga:
    return AppManga(
        slug=manga.slug,
        url=manga.url,
        title=manga.title,
        alternativeTitles=manga.alternativeTitles,
        authors=manga.authors,
        synopsis=manga.synopsis,
        covers=images(manga.covers),
        tags=manga.tags,
        classification=manga.classification.value,
        publication=manga.publication.value,
        createdAt=app_date(manga.createdAt),
        updatedAt=app_date(manga.updatedAt),
    )


def app_chapter(chapter: Chapter, manga_slug: str, fallback_url: str) -> AppChapter:
    """A chapter whose slug names it within its source, and whose URL the app can parse.

    The app force-unwraps ``URL(string: chapter.url)``: an upstream link it
    cannot parse is repaired, or replaced by ``fallback_url`` (the chapter's
    address on this host), never passed on to crash it.
    """
    return AppChapter(
        slug=chapter_key(manga_slug, chapter.slug),
        url=absolute_url(chapter.url) or fallback_url,
        title=chapter.title,
        number=chapter.number,
        date=app_date(chapter.date),
        language=chapter.language,
        scanlator=chapter.scanlator,
    )
