"""The search request and response, and the vocabularies of sorts and filters."""

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

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

# Bounds on what one search may ask, so no value reaches a source (an SQL
# offset, an upstream query string) that it cannot represent or afford. The
# host enforces them (toshokan.core.search) and the OpenAPI document, built
# from these models, publishes them.
MAX_PAGE = 10_000
MAX_LIMIT = 100
MAX_QUERY_CHARS = 500
MAX_FILTER_ITEMS = 100
MAX_FILTER_CHARS = 200
MAX_FILTER_NUMBER = 1_000_000

FilterText = Annotated[str, StringConstraints(max_length=MAX_FILTER_CHARS)]
FilterList = Annotated[list[FilterText], Field(max_length=MAX_FILTER_ITEMS)]
FilterNumber = Annotated[int, Field(ge=-MAX_FILTER_NUMBER, le=MAX_FILTER_NUMBER)]


class Filters(SpecModel):
    """Filter values typed per the spec's table; every key is optional, and ``null`` is
    the same as leaving the key out."""

    genre: FilterList | None = None
    status: FilterList | None = None
    contentRating: FilterList | None = None
    year: FilterNumber | None = None
    originalLanguage: FilterList | None = None
    translatedLanguage: FilterList | None = None
    author: FilterText | None = None
    artist: FilterText | None = None
    includeTag: FilterList | None = None
    excludeTag: FilterList | None = None
    demographic: FilterList | None = None
    publisher: FilterText | None = None
    minChapters: FilterNumber | None = None

    def given(self) -> dict[str, Any]:
        """The filters the client actually sent."""
        return self.model_dump(exclude_none=True)


class SearchRequest(SpecModel):
    """A search as the client sends it, after the host validated it against the source.

    Adapters receive this already checked: ``sort`` is declared, every filter
    key is declared and typed, tag slugs exist.
    """

    query: str = Field(default="", max_length=MAX_QUERY_CHARS)
    page: int = Field(ge=1, le=MAX_PAGE)
    limit: int = Field(default=20, ge=1, le=MAX_LIMIT)
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
