"""Turning upstream names and identifiers into spec-conformant slugs."""

import re
import unicodedata

#: Words the host routes under ``/:source/``; a manga slug may never be one of them.
RESERVED_SLUGS = frozenset({"search", "health", "ping", "authenticate"})

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def slugify(text: str, *, fallback: str = "untitled", max_length: int = 80) -> str:
    """A readable, deterministic ``[a-z0-9-]`` slug for ``text``.

    Accents are folded to ASCII; anything else outside the alphabet becomes a
    hyphen. Reserved words get a suffix so they never shadow a host route.
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = _NOT_SLUG.sub("-", ascii_text.lower()).strip("-")[:max_length].strip("-")
    slug = slug or fallback
    return f"{slug}-1" if slug in RESERVED_SLUGS else slug
