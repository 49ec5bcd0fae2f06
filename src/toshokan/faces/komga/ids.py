"""Komga's ids for the host's things: opaque strings derived from the slugs that name them.

Komga's ids are opaque strings the apps store (Mihon keeps a series' URL in its
library and its tracker), so they must name the same thing after a restart and
on every replica: a library is its source's slug, a series the source and
manga slugs, a book the source, manga and chapter slugs, each joined and put in
base64's URL-safe alphabet. Decoding checks the slug alphabets, so a forged or
stale id is simply not found, never a request to an adapter.
"""

import base64
import binascii

from toshokan.core.progress import ChapterRef
from toshokan.errors import NotFound
from toshokan.models.base import SLUG, SOURCE_SLUG

#: Longer than any id this face hands out (slugs are bounded by the sources); longer is no id.
MAX_ID = 1024
#: Slugs never hold it, so it separates them unambiguously.
_JOIN = "/"


def _encoded(*slugs: str) -> str:
    return base64.urlsafe_b64encode(_JOIN.join(slugs).encode()).decode().rstrip("=")


def _decoded(text: str, parts: int, what: str) -> list[str]:
    if not text or len(text) > MAX_ID or not text.isascii():
        raise _missing(what)
    try:
        joined = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise _missing(what) from None
    slugs = joined.split(_JOIN)
    if len(slugs) != parts or not SOURCE_SLUG.fullmatch(slugs[0]):
        raise _missing(what)
    if not all(SLUG.fullmatch(slug) for slug in slugs[1:]):
        raise _missing(what)
    return slugs


def _missing(what: str) -> NotFound:
    """Built when an id names nothing, never on the way to a thing it names."""
    return NotFound(f"No {what} has this id.")


def library_id(source: str) -> str:
    """A library is a source: its slug is already opaque, short and stable."""
    return source


def source_of_library(text: str) -> str:
    if len(text) > MAX_ID or not SOURCE_SLUG.fullmatch(text):
        raise NotFound("No library has this id.")
    return text


def series_id(source: str, manga: str) -> str:
    return _encoded(source, manga)


def series_of(text: str) -> tuple[str, str]:
    """The source and manga slugs a series id names; 404 for anything else."""
    source, manga = _decoded(text, 2, "series")
    return source, manga


def book_id(ref: ChapterRef) -> str:
    return _encoded(ref.source, ref.manga, ref.chapter)


def book_of(text: str) -> ChapterRef:
    """The chapter a book id names; 404 for anything else."""
    return ChapterRef(*_decoded(text, 3, "book"))


def collection_id(source: str, preset: int) -> str:
    """A collection is one of a source's presets, named by its place in the source's list."""
    return _encoded(source, str(preset))


def collection_of(text: str) -> tuple[str, int]:
    source, index = _decoded(text, 2, "collection")
    if not index.isdigit() or len(index) > 4:
        raise NotFound("No collection has this id.")
    return source, int(index)
