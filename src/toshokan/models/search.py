"""The search request and response, and the vocabularies of sorts and filters."""

from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from toshokan.models.base import SpecModel
from toshokan.models.content import Entry


class SortOption(StrEnum):
    RELEVANCE = "relevance"
    LATEST = "latest"
    TITLE = "title"
    POPULARITY = "popularity"
    RATING = "rating"
    CHAPTERS = "chapters"
    YEAR = "year"
    VIEWS = "views"
    FOLLOWS = "follows"
    CREATED_AT = "createdAt"
    UPDATED_AT = "updatedAt"


class FilterKey(StrEnum):
    GENRE = "genre"
    STATUS = "status"
    CONTENT_RATING = "contentRating"
    YEAR = "year"
    ORIGINAL_LANGUAGE = "originalLanguage"
    TRANSLATED_LANGUAGE = "translatedLanguage"
    AUTHOR = "author"
    ARTIST = "artist"
    INCLUDE_TAG = "includeTag"
    EXCLUDE_TAG = "excludeTag"
    DEMOGRAPHIC = "demographic"
    PUBLISHER = "publisher"
    MIN_CHAPTERS = "minChapters"


#: The value type of each filter, from the spec's filter table.
FILTER_TYPES: dict[FilterKey, type] = {
    FilterKey.GENRE: list,
    FilterKey.STATUS: list,
    FilterKey.CONTENT_RATING: list,
    FilterKey.YEAR: int,
    FilterKey.ORIGINAL_LANGUAGE: list,
    FilterKey.TRANSLATED_LANGUAGE: list,
    FilterKey.AUTHOR: str,
    FilterKey.ARTIST: str,
    FilterKey.INCLUDE_TAG: list,
    FilterKey.EXCLUDE_TAG: list,
    FilterKey.DEMOGRAPHIC: list,
    FilterKey.PUBLISHER: str,
    FilterKey.MIN_CHAPTERS: int,
}

Direction = Literal["asc", "desc"]


class Filters(SpecModel):
    """Filter values typed per the spec's table; every key is optional."""

    genre: list[str] | None = None
    status: list[str] | None = None
    contentRating: list[str] | None = None
    year: int | None = None
    originalLanguage: list[str] | None = None
    translatedLanguage: list[str] | None = None
    author: str | None = None
    artist: str | None = None
    includeTag: list[str] | None = None
    excludeTag: list[str] | None = None
    demographic: list[str] | None = None
    publisher: str | None = None
    minChapters: int | None = None

    def given(self) -> dict[str, Any]:
        """The filters the client actually sent."""
        return self.model_dump(exclude_none=True)


class SearchRequest(SpecModel):
    """A search as the client sends it, after the host validated it against the source.

    Adapters receive this already checked: ``sort`` is declared, every filter
    key is declared and typed, tag slugs exist.
    """

    query: str = ""
    page: int = Field(ge=1)
    limit: int = Field(default=20, ge=1, le=100)
    sort: SortOption
    direction: Direction = "desc"
    filters: Filters = Field(default_factory=Filters)

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.limit


class SearchResponse(SpecModel):
    results: list[Entry]
    page: int
    more: bool
