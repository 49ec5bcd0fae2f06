"""Chapter keys: one slug that names a chapter within its source, without its manga.

A source's chapter slug is only unique within its manga (the local library's
``ch-001`` exists in every series), and a source finds a chapter's pages from
both slugs. The Alethia app addresses a chapter on its own (it puts its own
database row id where the manga slug goes), so it is handed a *key* instead:
both slugs packed by the core (:mod:`toshokan.core.ids`) and spelled
:data:`~toshokan.core.ids.IN_SLUG`, ``<length of the manga slug>_<manga
slug>_<chapter slug>``, since the key stands where a chapter slug stands.
"""

from toshokan.core.ids import CHAPTER_IN_SOURCE, IN_SLUG
from toshokan.errors import ChapterNotFound


def chapter_key(manga_slug: str, chapter_slug: str) -> str:
    """The key of a chapter; the same pair always gives the same key."""
    return CHAPTER_IN_SOURCE.pack(IN_SLUG, manga_slug, chapter_slug)


def chapter_of(key: str) -> tuple[str, str]:
    """The (manga slug, chapter slug) a key names; ``CHAPTER_NOT_FOUND`` for anything else."""
    slugs = CHAPTER_IN_SOURCE.unpack(IN_SLUG, key)
    if slugs is None:
        raise ChapterNotFound(f"No chapter has the key {key[:60]!r}.")
    manga_slug, chapter_slug = slugs
    return manga_slug, chapter_slug
