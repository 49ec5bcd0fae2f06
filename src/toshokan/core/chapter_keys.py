"""Chapter keys: one slug that names a chapter within its source, without its manga.

A source's chapter slug is only unique within its manga (the local library's
``ch-001`` exists in every series), and a source finds a chapter's pages
from both slugs. Readers that address a chapter on its own (the Alethia app
puts its own database row id where the manga slug goes) get a *key* instead:
both slugs in one, reversibly, so nothing needs remembering between requests
and a key stays valid across restarts and replicas.

The form is ``<length of the manga slug>_<manga slug>_<chapter slug>``: inside
the slug alphabet ``[a-z0-9_-]``, readable, and unambiguous whatever either
slug contains, since the length says where the manga slug ends.
"""

import re

from toshokan.errors import ChapterNotFound
from toshokan.models.base import SLUG

_LENGTH = re.compile(r"[1-9][0-9]{0,3}")


def chapter_key(manga_slug: str, chapter_slug: str) -> str:
    """The key of a chapter; the same pair always gives the same key."""
    return f"{len(manga_slug)}_{manga_slug}_{chapter_slug}"


def chapter_of(key: str) -> tuple[str, str]:
    """The (manga slug, chapter slug) a key names; ``CHAPTER_NOT_FOUND`` for anything else."""
    length, _, rest = key.partition("_")
    if _LENGTH.fullmatch(length) and len(rest) > int(length) + 1:
        manga, separator, chapter = rest[: int(length)], rest[int(length)], rest[int(length) + 1 :]
        if separator == "_" and SLUG.fullmatch(manga) and SLUG.fullmatch(chapter):
            return manga, chapter
    raise ChapterNotFound(f"No chapter has the key {key[:60]!r}.")
