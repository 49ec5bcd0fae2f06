"""How a series' facts are decided when several places disagree.

Precedence, from strongest to weakest:

* ``series.json`` describes the whole series, so it wins for title, synopsis,
  publisher, year, status and age rating;
* ``ComicInfo.xml`` of the chapters comes next (the most common Series value,
  the summary of the earliest chapter that has one, the union of people,
  genres and tags, the earliest year, the strictest age rating);
* the folder or file name is the fallback (title and year).

Each function here is pure, so the rules are easy to test and to read.
"""

import functools
from collections.abc import Iterable

from toshokan.sdk import Classification, Publication, ReadingDirection, slugify

_STATUS = {
    "continuing": Publication.ONGOING,
    "ongoing": Publication.ONGOING,
    "publishing": Publication.ONGOING,
    "ended": Publication.COMPLETED,
    "completed": Publication.COMPLETED,
    "complete": Publication.COMPLETED,
    "finished": Publication.COMPLETED,
    "cancelled": Publication.CANCELLED,
    "canceled": Publication.CANCELLED,
    "discontinued": Publication.CANCELLED,
    "hiatus": Publication.HIATUS,
    "on hiatus": Publication.HIATUS,
}

_RATINGS = {
    "everyone": Classification.SAFE,
    "g": Classification.SAFE,
    "early childhood": Classification.SAFE,
    "kids to adults": Classification.SAFE,
    "everyone 10+": Classification.SAFE,
    "pg": Classification.SAFE,
    "all ages": Classification.SAFE,
    "teen": Classification.SAFE,
    "safe": Classification.SAFE,
    "suggestive": Classification.SUGGESTIVE,
    "mature 17+": Classification.SUGGESTIVE,
    "m": Classification.SUGGESTIVE,
    "ma15+": Classification.SUGGESTIVE,
    "ma 15+": Classification.SUGGESTIVE,
    "mature": Classification.SUGGESTIVE,
    "adults only 18+": Classification.EXPLICIT,
    "r18+": Classification.EXPLICIT,
    "erotica": Classification.EXPLICIT,
    "explicit": Classification.EXPLICIT,
    "x18+": Classification.PORNOGRAPHIC,
    "pornographic": Classification.PORNOGRAPHIC,
}

_SEVERITY = [
    Classification.UNKNOWN,
    Classification.SAFE,
    Classification.SUGGESTIVE,
    Classification.EXPLICIT,
    Classification.PORNOGRAPHIC,
]

#: Tag names that mark adult content, so clients can hide them.
NSFW_TAGS = frozenset(
    {"hentai", "ecchi", "smut", "adult", "erotica", "pornographic", "yaoi", "yuri"}
)


#: ComicInfo's ``Manga`` values that say how the work reads (the others, ``Yes``, ``No`` and
#: ``Unknown``, do not say it).
MANGA_DIRECTIONS: dict[str, ReadingDirection] = {"yesandrighttoleft": "rtl"}


def reading_direction(manga: str | None) -> ReadingDirection | None:
    """The reading direction ComicInfo's ``<Manga>`` gives, or None."""
    return MANGA_DIRECTIONS.get((manga or "").replace(" ", "").lower())


def publication(status: str | None) -> Publication:
    return _STATUS.get((status or "").strip().lower(), Publication.UNKNOWN)


def classification(rating: str | None) -> Classification:
    return _RATINGS.get((rating or "").strip().lower(), Classification.UNKNOWN)


def strictest(ratings: Iterable[str | None]) -> Classification:
    """The most restrictive rating among chapters: one explicit chapter makes the series explicit."""
    found = [classification(r) for r in ratings]
    return max(found, key=_SEVERITY.index, default=Classification.UNKNOWN)


def most_common(values: list[str | None], chapters: list[int]) -> str | None:
    """The value most chapters say, each value said by that many chapters (a series' distinct
    hints texts, counted once each); ties go to the one said first (chapter order)."""
    counts: dict[str, int] = {}
    for value, n in zip(values, chapters, strict=True):
        if value:
            counts[value] = counts.get(value, 0) + n
    if not counts:
        return None
    best = max(counts.values())
    return next(value for value, n in counts.items() if n == best)


def unique(values: Iterable[str | None], *, key: str = "lower") -> list[str]:
    """Values without repeats (case-insensitively, or by slug), first occurrence kept."""
    seen: set[str] = set()
    out: list[str] = []
    for value in values:
        if not value:
            continue
        marker = _slug_marker(value) if key == "slug" else value.lower()
        if marker and marker not in seen:
            seen.add(marker)
            out.append(value)
    return out


#: Distinct tag names remembered with their slugs: a library's series share a few hundred
#: names, each slugged several times a series when a scan rebuilds it.
_SLUGGED_NAMES = 4096


@functools.lru_cache(maxsize=_SLUGGED_NAMES)
def _slug_marker(value: str) -> str:
    return slugify(value, fallback="")


@functools.lru_cache(maxsize=_SLUGGED_NAMES)
def tag_slug(name: str) -> str:
    return slugify(name, fallback="tag", max_length=50)


def is_nsfw_tag(name: str) -> bool:
    return name.strip().lower() in NSFW_TAGS
