"""The source configuration served at ``GET /:source``."""

from typing import Any

from pydantic import Field, HttpUrl, model_validator

from toshokan.models.auth import AuthConfig
from toshokan.models.base import SourceSlug, SpecModel, Timestamp
from toshokan.models.content import Tag
from toshokan.models.search import FilterKey, SearchRequest, SortOption


class SearchConfig(SpecModel):
    sort: list[SortOption] = Field(min_length=1)
    filters: list[FilterKey] = Field(default_factory=list)
    tags: list[Tag] = Field(default_factory=list)

    @model_validator(mode="after")
    def _tags_when_tag_filters(self) -> "SearchConfig":
        if {FilterKey.INCLUDE_TAG, FilterKey.EXCLUDE_TAG} & set(self.filters) and not self.tags:
            raise ValueError("search.tags must be non-empty when includeTag/excludeTag is declared")
        slugs = [t.slug for t in self.tags]
        if len(slugs) != len(set(slugs)):
            dupes = sorted({s for s in slugs if slugs.count(s) > 1})
            raise ValueError(f"search.tags has duplicate slugs: {', '.join(dupes)}")
        return self


class Preset(SpecModel):
    name: str = Field(min_length=1)
    description: str = ""
    request: SearchRequest


class SourceConfiguration(SpecModel):
    name: str = Field(min_length=2, max_length=50)
    slug: SourceSlug
    icon: str
    url: str
    referer: str = ""
    languages: list[str] = Field(min_length=1)
    nsfw: bool = False
    auth: AuthConfig = Field(default_factory=AuthConfig)
    search: SearchConfig
    presets: list[Preset] = Field(default_factory=list)
    version: str = "0.1.0"
    hash: str = ""
    updatedAt: Timestamp | None = None

    @model_validator(mode="after")
    def _urls_and_presets(self) -> "SourceConfiguration":
        for field in ("icon", "url"):
            HttpUrl(getattr(self, field))  # raises with a message naming the bad URL
        for preset in self.presets:
            problem = preset_problem(preset.request, self.search)
            if problem:
                raise ValueError(f"preset {preset.name!r}: {problem}")
        return self


def preset_problem(request: SearchRequest, search: SearchConfig) -> str | None:
    """Why a search request does not fit a source's declared search, or None."""
    if request.sort not in search.sort:
        return f"sort {request.sort.value!r} is not declared (declared: {_names(search.sort)})"
    given = request.filters.given()
    undeclared = [k for k in given if k not in search.filters]
    if undeclared:
        return f"filter {undeclared[0]!r} is not declared (declared: {_names(search.filters)})"
    known = {t.slug for t in search.tags}
    for key in (FilterKey.INCLUDE_TAG, FilterKey.EXCLUDE_TAG):
        for slug in given.get(key.value, []):
            if slug not in known:
                return f"{key.value} tag {slug!r} is not declared in search.tags"
    return None


def _names(values: list[Any]) -> str:
    return ", ".join(str(v) for v in values) or "none"
