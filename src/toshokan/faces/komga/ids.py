"""Komga's ids for the host's things: the core's packed ids, spelled opaquely.

Komga's ids are opaque strings the apps store (Mihon keeps a series' URL in its
library and its tracker), so they must name the same thing after a restart and
on every replica: a library is its source's slug, a series the source and manga
slugs, a book the source, manga and chapter slugs, packed by the core
(:mod:`toshokan.core.ids`) and spelled :data:`~toshokan.core.ids.OPAQUE`. A
forged or stale id is simply not found, never a request to an adapter.
"""

import re

from toshokan.core.ids import CHAPTER, MANGA, MAX_ID, OPAQUE, Packing
from toshokan.core.progress import ChapterRef
from toshokan.errors import NotFound
from toshokan.models.base import SOURCE_SLUG

#: A collection: a source and the place of one of its presets in the source's list.
_COLLECTION = Packing((SOURCE_SLUG, re.compile(r"[0-9]{1,4}")))


def _unpacked(packing: Packing, text: str, what: str) -> tuple[str, ...]:
    slugs = packing.unpack(OPAQUE, text)
    if slugs is None:
        raise NotFound(f"No {what} has this id.")
    return slugs


def library_id(source: str) -> str:
    """A library is a source: its slug is already opaque, short and stable."""
    return source


def source_of_library(text: str) -> str:
    if len(text) > MAX_ID or not SOURCE_SLUG.fullmatch(text):
        raise NotFound("No library has this id.")
    return text


def series_id(source: str, manga: str) -> str:
    return MANGA.pack(OPAQUE, source, manga)


def series_of(text: str) -> tuple[str, str]:
    """The source and manga slugs a series id names; 404 for anything else."""
    source, manga = _unpacked(MANGA, text, "series")
    return source, manga


def book_id(ref: ChapterRef) -> str:
    return CHAPTER.pack(OPAQUE, ref.source, ref.manga, ref.chapter)


def book_of(text: str) -> ChapterRef:
    """The chapter a book id names; 404 for anything else."""
    return ChapterRef(*_unpacked(CHAPTER, text, "book"))


def collection_id(source: str, preset: int) -> str:
    """A collection is one of a source's presets, named by its place in the source's list."""
    return _COLLECTION.pack(OPAQUE, source, str(preset))


def collection_of(text: str) -> tuple[str, int]:
    source, index = _unpacked(_COLLECTION, text, "collection")
    return source, int(index)
