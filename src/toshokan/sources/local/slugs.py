"""Stable, readable slugs for series and chapters of a local library.

A slug derives from the resource itself (a series from its folder name, a
chapter from its number, group and language), never from its position among
others, so it is the same after every rescan, restart and on every machine.
Names in any script are transliterated (``進撃の巨人`` -> ``jin-ji-no-ju-ren``).

Two names can give the same slug (``Re Zero``, ``Re-Zero``, and ``Re:Zero``
with a full-width colon). The index remembers every slug it ever handed out and to which path (a *claim*);
a claim is kept for good, so a slug never moves to another series, even after
its own series left the library. Where a slug is already claimed by another
path, the newcomer gets a disambiguator derived from its own path
(``re-zero-3f9a1c``), which no other series' coming or going can change.
"""

import functools
import hashlib
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping

from anyascii import anyascii

from toshokan.sdk import slugify
from toshokan.sdk.names import format_number
from toshokan.sdk.slugs import RESERVED_SLUGS

SLUG_RE = re.compile(r"^[a-z0-9_-]+$")


def is_slug(value: str) -> bool:
    """Whether ``value`` could be a slug at all; anything else is simply not found."""
    return bool(SLUG_RE.match(value)) and len(value) <= 200


#: Scripts written without spaces between words: each character is a syllable or word.
_SYLLABIC = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL")


def transliterate(text: str) -> str:
    """``text`` in ASCII, CJK characters kept apart so their readings do not run together."""
    if text.isascii():
        return text
    parts: list[str] = []
    for char in text:
        if char.isascii():
            parts.append(char)
        elif unicodedata.name(char, "").startswith(_SYLLABIC):
            parts.append(f" {anyascii(char)} ")
        else:
            parts.append(anyascii(char))
    return "".join(parts)


def series_base_slug(title: str) -> str:
    return slugify(transliterate(title), fallback="series")


@functools.lru_cache(maxsize=1024)
def _group_slug(group: str) -> str:
    """A scanlation group's part of a slug: one group names most chapters of a series,
    so a scan transliterates each group once, not once a chapter."""
    return slugify(transliterate(group), fallback="", max_length=30)


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
        head = slugify(transliterate(stem), fallback="chapter", max_length=40)
    parts = [head]
    if group:
        parts.append(_group_slug(group))
    if language and language.lower() != default_language.lower():
        parts.append(slugify(language, fallback="", max_length=10))
    slug = "-".join([p for p in parts if p])
    return f"{slug}-1" if slug in RESERVED_SLUGS else slug


def candidates(base: str, relpath: str) -> Iterator[str]:
    """The slugs ``relpath`` may take, in order of preference: its base, then with a
    disambiguator from its own path (longer ones only if a shorter one is claimed)."""
    yield base
    digest = hashlib.sha1(relpath.encode("utf-8", "surrogatepass")).hexdigest()
    for length in (6, 10, 40):
        yield f"{base}-{digest[:length]}"


def assign(items: Iterable[tuple[str, str]], claims: Mapping[str, str]) -> dict[str, str]:
    """Map each ``(relpath, base_slug)`` to a slug, given the ``slug -> relpath`` claims.

    A path keeps the first of its candidates it already claimed; other paths take,
    in path order, their first candidate that nobody claimed. The caller records
    the new claims. Deterministic: the same items and claims give the same slugs.
    """
    result: dict[str, str] = {}
    taken: set[str] = set()
    fresh: list[tuple[str, str]] = []
    # A path holding no claim (every path of a first scan) has no candidate to look up.
    claimants = set(claims.values())
    for relpath, base in sorted(items):
        held = (
            next((c for c in candidates(base, relpath) if claims.get(c) == relpath), None)
            if relpath in claimants
            else None
        )
        if held is None:
            fresh.append((relpath, base))
        else:
            result[relpath] = held
            taken.add(held)
    for relpath, base in fresh:
        for candidate in candidates(base, relpath):
            if candidate not in taken and claims.get(candidate, relpath) == relpath:
                result[relpath] = candidate
                taken.add(candidate)
                break
        else:  # only a forged name can claim all of them; the full digest is still its own
            result[relpath] = candidate
    return result
