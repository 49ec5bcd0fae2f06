"""MangaDex's documented response bodies, as the typed shapes this adapter reads.

Each endpoint's body is validated on arrival (:meth:`UpstreamClient.get_payload`)
against these ``TypedDict``s, so the mapping code reads typed dictionaries
whose keys and value types are known, and a body of any other shape (a
chapter whose ``attributes`` is a string, a ``total`` of ``1e400`` or
``"abc"``, a feed item that is a number) is ``UPSTREAM_ERROR`` before the
mapping sees it. Only the fields the adapter reads are declared; the rest is
dropped. Numbers and lists carry the bounds the API documents, so no absurd
value reaches the paging arithmetic.

MangaDex serializes an empty localized string (``{"en": "..."}``) as ``[]``;
:data:`Localized` accepts that and reads it as ``{}``.
"""

from typing import Annotated, Any, NotRequired

from pydantic import BeforeValidator, Field, TypeAdapter
from typing_extensions import TypedDict

from toshokan.sources.mangadex.api import FEED_PAGE_MAX, MANGA_PAGE_MAX

#: Longest free text kept from a payload (a synopsis is the longest MangaDex has).
MAX_TEXT = 20_000
#: Most entries of one list inside an item (titles, tags, relationships, page files).
MAX_ITEMS = 2_000
#: Largest ``total`` believed: far more than MangaDex has of anything.
MAX_TOTAL = 100_000_000


def _empty_list_is_empty_object(value: Any) -> Any:
    return {} if value == [] else value


Id = Annotated[str, Field(min_length=1, max_length=64)]
Text = Annotated[str, Field(max_length=MAX_TEXT)]
Localized = Annotated[
    dict[str, Text | None],
    BeforeValidator(_empty_list_is_empty_object),
    Field(max_length=MAX_ITEMS),
]
Total = Annotated[int, Field(ge=0, le=MAX_TOTAL)]


class RelatedAttributes(TypedDict, total=False):
    """What this adapter reads of an expanded relationship: a cover's file, a person's name."""

    fileName: Text | None
    name: Text | None


class Relationship(TypedDict):
    id: Id
    type: Text
    attributes: NotRequired[RelatedAttributes | None]


Relationships = Annotated[list[Relationship], Field(max_length=MAX_ITEMS)]


class TagAttributes(TypedDict, total=False):
    name: Localized | None


class Tag(TypedDict):
    id: Id
    attributes: NotRequired[TagAttributes | None]


class MangaAttributes(TypedDict, total=False):
    title: Localized | None
    altTitles: Annotated[list[Localized], Field(max_length=MAX_ITEMS)] | None
    description: Localized | None
    tags: Annotated[list[Tag], Field(max_length=MAX_ITEMS)] | None
    contentRating: Text | None
    #: The work's first language: Japanese means manga, read right to left.
    originalLanguage: Text | None
    status: Text | None
    createdAt: Text | None
    updatedAt: Text | None
    latestUploadedChapter: Text | None


class MangaItem(TypedDict):
    id: Id
    attributes: MangaAttributes
    relationships: NotRequired[Relationships | None]


class ChapterAttributes(TypedDict, total=False):
    volume: Text | None
    chapter: Text | None
    title: Text | None
    translatedLanguage: Text | None
    externalUrl: Text | None
    pages: Annotated[int, Field(ge=0, le=MAX_TOTAL)] | None
    publishAt: Text | None
    readableAt: Text | None
    createdAt: Text | None
    isUnavailable: bool | None


class ChapterItem(TypedDict):
    id: Id
    attributes: ChapterAttributes
    relationships: NotRequired[Relationships | None]


class MangaList(TypedDict):
    """``GET /manga``."""

    data: Annotated[list[MangaItem], Field(max_length=MANGA_PAGE_MAX)]
    total: Total


class MangaOne(TypedDict):
    """``GET /manga/{id}``."""

    data: MangaItem


class Feed(TypedDict):
    """``GET /manga/{id}/feed``: one page of chapters."""

    data: Annotated[list[ChapterItem], Field(max_length=FEED_PAGE_MAX)]
    total: Total


class ChapterOne(TypedDict):
    """``GET /chapter/{id}``."""

    data: ChapterItem


class CoverAttributes(TypedDict, total=False):
    fileName: Text | None


class CoverItem(TypedDict):
    id: Id
    attributes: CoverAttributes


class CoverList(TypedDict):
    """``GET /cover``."""

    data: Annotated[list[CoverItem], Field(max_length=MANGA_PAGE_MAX)]


class PersonAttributes(TypedDict):
    name: Text


class PersonItem(TypedDict):
    id: Id
    attributes: PersonAttributes


class PersonList(TypedDict):
    """``GET /author``."""

    data: Annotated[list[PersonItem], Field(max_length=MANGA_PAGE_MAX)]


FileName = Annotated[str, Field(min_length=1, max_length=300, pattern=r"^[^/\\]+$")]


class AtHomeChapter(TypedDict):
    hash: Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[0-9A-Za-z]+$")]
    data: Annotated[list[FileName], Field(max_length=MAX_ITEMS)]
    dataSaver: Annotated[list[FileName], Field(max_length=MAX_ITEMS)]


class AtHome(TypedDict):
    """``GET /at-home/server/{id}``: where a chapter's page images are served from."""

    baseUrl: Annotated[str, Field(max_length=300, pattern=r"^https?://[^\s]+$")]
    chapter: AtHomeChapter


MANGA_LIST = TypeAdapter(MangaList)
MANGA_ONE = TypeAdapter(MangaOne)
FEED = TypeAdapter(Feed)
CHAPTER_ONE = TypeAdapter(ChapterOne)
COVER_LIST = TypeAdapter(CoverList)
PERSON_LIST = TypeAdapter(PersonList)
AT_HOME = TypeAdapter(AtHome)
