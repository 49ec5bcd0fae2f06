"""Works, chapters and tags: what a source returns about its content."""

from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic.json_schema import SkipJsonSchema

from toshokan.models.base import Number, Slug, SpecModel, Timestamp

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Classification(StrEnum):
    UNKNOWN = "Unknown"
    SAFE = "Safe"
    SUGGESTIVE = "Suggestive"
    EXPLICIT = "Explicit"
    PORNOGRAPHIC = "Pornographic"


class Publication(StrEnum):
    UNKNOWN = "Unknown"
    ONGOING = "Ongoing"
    COMPLETED = "Completed"
    CANCELLED = "Cancelled"
    HIATUS = "Hiatus"


#: How a work is read: left to right, right to left (most Japanese manga), or down a long
#: vertical strip (webtoons). Beside the spec's fields: readers that know it open a work so.
ReadingDirection = Literal["ltr", "rtl", "vertical"]


class Tag(SpecModel):
    slug: Slug
    name: str = Field(min_length=1, max_length=50)
    nsfw: bool = False


def _default_if_blank(default: str):  # type: ignore[no-untyped-def]
    def fill(value: str | None) -> str:
        return value if value and value.strip() else default

    return fill


class Manga(SpecModel):
    slug: Slug
    url: str
    title: str = "Unknown Title"
    alternativeTitles: list[str] = Field(default_factory=list)
    authors: list[str] = Field(default_factory=list)
    synopsis: str = "No Description."
    covers: list[str] = Field(default_factory=list)
    tags: list[Slug] = Field(default_factory=list)
    classification: Classification = Classification.UNKNOWN
    publication: Publication = Publication.UNKNOWN
    createdAt: Timestamp = EPOCH
    updatedAt: Timestamp = EPOCH
    #: How the work reads, when its source knows (ComicInfo's ``Manga``, MangaDex's original
    #: language and format); null when it does not.
    readingDirection: ReadingDirection | None = None

    _title = field_validator("title", mode="before")(_default_if_blank("Unknown Title"))
    _synopsis = field_validator("synopsis", mode="before")(_default_if_blank("No Description."))


class Entry(SpecModel):
    """One search result: only what a result list shows."""

    slug: Slug
    title: str = "Unknown Title"
    cover: str | None = None
    #: The title's details, when the source had them with the result at no extra cost (a
    #: MangaDex search answers them). Faces that describe list items (OPDS) show them; the
    #: spec's Entry has no such field, so they are never on the wire.
    details: Annotated[Manga | None, SkipJsonSchema()] = Field(default=None, exclude=True)


class Chapter(SpecModel):
    slug: Slug
    url: str
    title: str = "No Title"
    number: Number = Field(default=0, ge=0, allow_inf_nan=False)
    date: Timestamp = EPOCH
    language: str = "en"
    scanlator: str = "Unknown Scanlator"

    #: The page count, when the source knows it without asking (MangaDex's feed says it), so
    #: that a face can announce it (OPDS-PSE's ``pse:count``) before the pages are listed. The
    #: spec's Chapter has no such field: never on the wire.
    pages: Annotated[int | None, SkipJsonSchema()] = Field(default=None, ge=1, exclude=True)

    _title = field_validator("title", mode="before")(_default_if_blank("No Title"))
    _scanlator = field_validator("scanlator", mode="before")(_default_if_blank("Unknown Scanlator"))


def newest_first(chapters: list[Chapter]) -> list[Chapter]:
    """Order chapters as DECISIONS.md rules: date descending, ties by number descending."""
    return sorted(chapters, key=lambda c: (c.date, c.number), reverse=True)
