"""Stable, readable slugs for series and chapters of a local library.

A slug is derived only from names on disk (the series folder, the chapter's
number, group and language), never from scan order or timestamps, so the same
library gives the same slugs after every rescan and on every machine.
Collisions are settled by sorted relative path: the first keeps the plain
slug, the others get ``-2``, ``-3``... (skipping any already taken).
"""

import re
from collections.abc import Iterable

from toshokan.sdk import slugify
from toshokan.sdk.names import format_number
from toshokan.sdk.slugs import RESERVED_SLUGS

SLUG_RE = re.compile(r"^[a-z0-9_-]+$")


def is_slug(value: str) -> bool:
    """Whether ``value`` could be a slug at all; anything else is simply not found."""
    return bool(SLUG_RE.match(value)) and len(value) <= 200


def series_base_slug(title: str) -> str:
    return slugify(title, fallback="series")


def chapter_base_slug(
    *,
    number: float | None,
    volume: float | None,
    oneshot: bool,
    group: str,
    language: str,
    default_language: str,
    stem: str,
) -> str:
    """``ch-1045-group``, ``ch-11-5``, ``vol-2``, ``oneshot``, plus ``-es`` for other languages."""
    if oneshot and not number:
        head = "oneshot"
    elif number is not None:
        head = "ch-" + format_number(number).replace(".", "-")
    elif volume is not None:
        head = "vol-" + format_number(volume).replace(".", "-")
    else:
        head = slugify(stem, fallback="chapter", max_length=40)
    parts = [head]
    if group:
        parts.append(slugify(group, fallback="", max_length=30))
    if language and language.lower() != default_language.lower():
        parts.append(slugify(language, fallback="", max_length=10))
    slug = "-".join(p for p in parts if p)
    return f"{slug}-1" if slug in RESERVED_SLUGS else slug


def assign(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Map each ``(relpath, base_slug)`` to a unique slug, deterministically.

    The first relpath (sorted) with a given base keeps it; later ones get the
    lowest free ``-N`` suffix, N >= 2.
    """
    ordered = sorted(items, key=lambda item: (item[1], item[0]))
    taken = {base for _, base in ordered}
    result: dict[str, str] = {}
    first_claimed: set[str] = set()
    for relpath, base in ordered:
        if base not in first_claimed:
            first_claimed.add(base)
            result[relpath] = base
            continue
        n = 2
        while f"{base}-{n}" in taken:
            n += 1
        slug = f"{base}-{n}"
        taken.add(slug)
        result[relpath] = slug
    return result
