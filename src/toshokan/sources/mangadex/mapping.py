"""MangaDex payloads to the spec's objects.

Pure functions, one per object, so every rule (which title, which cover,
which number a oneshot gets) reads in one place and is tested without HTTP.
"""

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from toshokan.sdk import (
    EPOCH,
    Chapter,
    Classification,
    Entry,
    Manga,
    Publication,
    ReadingDirection,
    slugify,
)
from toshokan.sources.mangadex.tags import TagCatalogue

SITE = "https://mangadex.org"
Json = Mapping[str, Any]

CLASSIFICATIONS = {
    "safe": Classification.SAFE,
    "suggestive": Classification.SUGGESTIVE,
    "erotica": Classification.EXPLICIT,
    "pornographic": Classification.PORNOGRAPHIC,
}
PUBLICATIONS = {
    "ongoing": Publication.ONGOING,
    "completed": Publication.COMPLETED,
    "hiatus": Publication.HIATUS,
    "cancelled": Publication.CANCELLED,
}
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def manga_url(manga_id: str) -> str:
    return f"{SITE}/title/{manga_id}"


def chapter_url(chapter_id: str) -> str:
    return f"{SITE}/chapter/{chapter_id}"


def cover_url(uploads: str, manga_id: str, file_name: str, size: int | None = None) -> str:
    """A cover image; ``size`` 256 or 512 picks MangaDex's pre-scaled thumbnail."""
    suffix = f".{size}.jpg" if size else ""
    return f"{uploads}/covers/{manga_id}/{file_name}{suffix}"


def relationships(item: Json, kind: str) -> list[Json]:
    return [r for r in item.get("relationships") or () if r.get("type") == kind]


def parse_time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


# -- titles and text ------------------------------------------------------------


def _localized(values: Iterable[Json]) -> list[tuple[str, str]]:
    """(language, text) pairs of localized strings, in order, blanks dropped."""
    pairs = []
    for value in values:
        for lang, text in (value or {}).items():
            if isinstance(text, str) and text.strip():
                pairs.append((lang, text.strip()))
    return pairs


def titles(attributes: Json, preference: Sequence[str]) -> tuple[str, list[str]]:
    """The display title in the preferred language, and every other title once.

    The main ``title`` wins within a language over ``altTitles``; without any
    preferred language the main title's first value is used.
    """
    pairs = _localized([attributes.get("title") or {}, *(attributes.get("altTitles") or [])])
    if not pairs:
        return "Unknown Title", []
    chosen = pairs[0][1]
    for lang in preference:
        match = next((text for code, text in pairs if code == lang), None)
        if match:
            chosen = match
            break
    seen = {chosen.casefold()}
    others = []
    for _, text in pairs:
        if text.casefold() not in seen:
            seen.add(text.casefold())
            others.append(text)
    return chosen, others


def localized_text(value: Json | None, preference: Sequence[str]) -> str:
    """A localized string in the first preferred language, else English, else any."""
    pairs = dict(_localized([value or {}]))
    for lang in (*preference, "en"):
        if pairs.get(lang):
            return pairs[lang]
    return next(iter(pairs.values()), "")


# -- works ----------------------------------------------------------------------


def entry(item: Json, *, preference: Sequence[str], uploads: str, catalogue: TagCatalogue) -> Entry:
    """A search result: slug, preferred title, the main cover's 256px thumbnail.

    A search item holds what details hold but the other covers, so the result
    carries them too, for faces that describe the titles of a list.
    """
    title, _ = titles(item["attributes"], preference)
    covers = relationships(item, "cover_art")
    file_name = (covers[0].get("attributes") or {}).get("fileName") if covers else None
    cover = cover_url(uploads, item["id"], file_name, 256) if file_name else None
    details = manga(item, (), preference=preference, uploads=uploads, catalogue=catalogue)
    return Entry(slug=item["id"], title=title, cover=cover, details=details)


def tag_slugs(attributes: Json, catalogue: TagCatalogue) -> list[str]:
    """The work's tags as slugs; a tag newer than the shipped list gets a slug from its name."""
    slugs: list[str] = []
    for tag in attributes.get("tags") or ():
        known = catalogue.by_id(tag.get("id", ""))
        if known:
            slug = known.slug
        else:
            name = localized_text((tag.get("attributes") or {}).get("name"), ["en"])
            slug = slugify(name, fallback="tag")
        if slug not in slugs:
            slugs.append(slug)
    return slugs


def people(item: Json) -> list[str]:
    """Authors then artists, each name once (MangaDex lists the same person in both roles)."""
    names: list[str] = []
    for kind in ("author", "artist"):
        for person in relationships(item, kind):
            name = ((person.get("attributes") or {}).get("name") or "").strip()
            if name and name not in names:
                names.append(name)
    return names


def covers(item: Json, all_covers: Iterable[Json], uploads: str) -> list[str]:
    """The main cover first, then every other cover (by volume), as 512px images."""
    manga_id = item["id"]
    files: list[str] = []
    for cover in [*relationships(item, "cover_art"), *all_covers]:
        file_name = (cover.get("attributes") or {}).get("fileName")
        if file_name and file_name not in files:
            files.append(file_name)
    return [cover_url(uploads, manga_id, f, 512) for f in files]


#: MangaDex's tag for works read down one long strip (webtoons), by its name.
LONG_STRIP = "long-strip"


def reading_direction(attributes: Json, tags: list[str]) -> ReadingDirection | None:
    """How the work reads, as far as MangaDex says: a long strip downwards; a work first
    published in Japanese (manga) right to left; otherwise not said."""
    if LONG_STRIP in tags:
        return "vertical"
    language = str(attributes.get("originalLanguage") or "").lower()
    if language == "ja" or language.startswith("ja-"):
        return "rtl"
    return None


def manga(
    item: Json,
    all_covers: Iterable[Json],
    *,
    preference: Sequence[str],
    uploads: str,
    catalogue: TagCatalogue,
) -> Manga:
    attributes = item["attributes"]
    title, alternatives = titles(attributes, preference)
    tags = tag_slugs(attributes, catalogue)
    return Manga(
        slug=item["id"],
        url=manga_url(item["id"]),
        title=title,
        alternativeTitles=alternatives,
        authors=people(item),
        synopsis=localized_text(attributes.get("description"), preference),
        covers=covers(item, all_covers, uploads),
        tags=tags,
        classification=CLASSIFICATIONS.get(
            attributes.get("contentRating") or "", Classification.UNKNOWN
        ),
        publication=PUBLICATIONS.get(attributes.get("status") or "", Publication.UNKNOWN),
        createdAt=parse_time(attributes.get("createdAt")) or EPOCH,
        updatedAt=parse_time(attributes.get("updatedAt")) or EPOCH,
        readingDirection=reading_direction(attributes, tags),
    )


# -- chapters -------------------------------------------------------------------


def is_external(attributes: Json) -> bool:
    """Hosted off-site: MangaDex only links to it and serves no pages."""
    return bool(attributes.get("externalUrl")) or attributes.get("pages") == 0


def chapter_number(value: object) -> float:
    """MangaDex's free-text chapter number as a number; a oneshot (null) is 0."""
    if not isinstance(value, str) or not value.strip():
        return 0.0
    try:
        number = float(value)
    except ValueError:
        found = _NUMBER.search(value)
        number = float(found.group()) if found else 0.0
    return number if number >= 0 and number == number and number != float("inf") else 0.0


def chapter_label(attributes: Json) -> str:
    """``Vol. 2 Ch. 10.5 - Title``; ``Oneshot`` when there is no chapter number."""
    volume, number, name = (
        attributes.get("volume"),
        attributes.get("chapter"),
        attributes.get("title"),
    )
    parts = []
    if volume:
        parts.append(f"Vol. {volume}")
    parts.append(f"Ch. {number}" if number else "Oneshot")
    label = " ".join(parts)
    if isinstance(name, str) and name.strip():
        label += f" - {name.strip()}"
    return label


def scanlator(item: Json) -> str:
    """Every scanlation group of the chapter, joined; empty (spec default) when none."""
    names = [
        ((g.get("attributes") or {}).get("name") or "").strip()
        for g in relationships(item, "scanlation_group")
    ]
    return ", ".join(n for n in names if n)


def chapter(item: Json) -> Chapter:
    attributes = item["attributes"]
    external = is_external(attributes)
    label = chapter_label(attributes)
    date = (
        parse_time(attributes.get("publishAt"))
        or parse_time(attributes.get("readableAt"))
        or parse_time(attributes.get("createdAt"))
        or EPOCH
    )
    return Chapter(
        slug=item["id"],
        url=(attributes.get("externalUrl") if external else None) or chapter_url(item["id"]),
        title=f"[External] {label}" if external else label,
        number=chapter_number(attributes.get("chapter")),
        date=date,
        language=attributes.get("translatedLanguage") or "en",
        scanlator=scanlator(item),
        pages=None if external else (attributes.get("pages") or None),
    )


def distinguish(chapters: list[Chapter]) -> list[Chapter]:
    """Make the titles of several versions of one chapter tell them apart.

    Versions share a number (and so a label); each gets what differs among
    them appended: the language when the versions span languages, the group
    when they span groups, and as a last resort a short id.
    """
    versions: dict[tuple[float, str], list[Chapter]] = defaultdict(list)
    for c in chapters:
        versions[(c.number, c.title)].append(c)
    for same in versions.values():
        if len(same) < 2:
            continue
        languages = {c.language for c in same}
        groups = {c.scanlator for c in same}
        for c in same:
            extra = []
            if len(languages) > 1:
                extra.append(c.language)
            if len(groups) > 1:
                extra.append(c.scanlator or "no group")
            if extra:
                c.title = f"{c.title} ({', '.join(extra)})"
    titles_seen: dict[tuple[float, str], list[Chapter]] = defaultdict(list)
    for c in chapters:
        titles_seen[(c.number, c.title)].append(c)
    for same in titles_seen.values():
        if len(same) > 1:  # same group, same language: only the id tells them apart
            for c in same:
                c.title = f"{c.title} (#{c.slug[:8]})"
    return chapters
