"""Series rows: built from their chapters, never read from disk directly.

A series has no file of its own to open (apart from an optional series.json
and cover image), so its row is recomputed from the chapter rows already in
the index whenever one of them, or the series' own metadata, changed. The
rules for which source wins live in :mod:`metadata`; this module gathers the
inputs, applies them, and keeps the search tables (terms, FTS text) and the
library-wide tag list in step with the result.
"""

import json
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from toshokan.sdk import Classification, Publication
from toshokan.sdk.names import parse_chapter_name, parse_series_name
from toshokan.sources.local import metadata as md
from toshokan.sources.local.discovery import FoundSeries
from toshokan.sources.local.index.slug_rows import LibraryClaims, assign_chapter_slugs
from toshokan.sources.local.seriesjson import SeriesJson, SeriesJsonError
from toshokan.sources.local.slugs import series_base_slug
from toshokan.sources.local.versions import version_of

#: Reads a series.json by relpath; raises SeriesJsonError or OSError when unusable.
SeriesJsonReader = Callable[[str], SeriesJson]

#: ``(relpath, kind, member, version)``: where the cover image is, and a cache-buster.
Cover = tuple[str, str, str | None, str]


def fallback_title(series: FoundSeries) -> tuple[str, int | None]:
    """Title and year from the folder (or lone archive) name, for when nothing better exists."""
    name = series.relpath
    if series.is_file:
        parsed = parse_chapter_name(name)
        stem = name.rsplit(".", 1)[0]
        return parsed.series or stem, parsed.year
    folder = parse_series_name(name)
    return folder.title, folder.year


def insert_series(db: sqlite3.Connection, series: FoundSeries) -> int:
    """A placeholder row, so chapters have a series id; :func:`aggregate_series` fills it."""
    title, _ = fallback_title(series)
    cursor = db.execute(
        "INSERT INTO series(relpath, base_slug, title, sort_title) VALUES(?, ?, ?, ?)",
        (series.relpath, series_base_slug(title), title, title.casefold()),
    )
    return int(cursor.lastrowid or 0)


def delete_series(db: sqlite3.Connection, sid: int) -> None:
    db.execute("DELETE FROM series_fts WHERE rowid = ?", (sid,))
    db.execute("DELETE FROM series WHERE id = ?", (sid,))


def aggregate_series(
    db: sqlite3.Connection,
    sid: int,
    series: FoundSeries,
    read_series_json: SeriesJsonReader,
    claims: LibraryClaims,
    *,
    written: list[dict[str, Any]] | None = None,
) -> bool:
    """Recompute a series row from its chapters; False when it has none left (deleted).

    ``written``, when given, is every chapter row of the series as this scan wrote them,
    with their claimed slugs (a first scan's): taken as they are, not read back, and their
    slugs not assigned again (from the claims just made, each would get the same).
    """
    rows: Sequence[Mapping[str, Any]]
    if written is None:
        stored = db.execute(
            "SELECT * FROM chapters WHERE series_id = ? ORDER BY number, relpath", (sid,)
        ).fetchall()
        rows = stored
    else:
        rows = sorted(written, key=_chapter_order)
    if not rows:
        delete_series(db, sid)
        return False
    series_json = _current_series_json(db, sid, series, read_series_json)
    facts = _decide_facts(series, rows, series_json)
    _update_series_row(db, sid, series, rows, facts, series_json)
    _replace_search_terms(db, sid, facts)
    _replace_search_text(db, sid, facts)
    if written is None:
        assign_chapter_slugs(db, claims, series.relpath, stored)
    return True


#: The order of a series' chapter rows: the query's ``ORDER BY number, relpath`` (numbers
#: are never NULL, and paths compare alike as SQLite's bytes and as Python's code points).
_chapter_order = itemgetter("number", "relpath")


def _current_series_json(
    db: sqlite3.Connection, sid: int, series: FoundSeries, read: SeriesJsonReader
) -> SeriesJson | None:
    """The series.json as stored last time if unchanged, else read afresh.

    A refused file becomes a warning on the series.json path and is ignored,
    so the series still shows with what its chapters say.
    """
    row = db.execute("SELECT meta_sig, series_json FROM series WHERE id = ?", (sid,)).fetchone()
    if row["meta_sig"] == series.meta_sig and row["series_json"] is not None:
        stored = json.loads(row["series_json"])
        return SeriesJson(**stored) if stored else None
    db.execute(
        "DELETE FROM problems WHERE relpath = ? AND severity = 'warning'",
        (f"{series.relpath}/series.json",),
    )
    if series.series_json is None:
        return None
    relpath = series.series_json[0]
    try:
        return read(relpath)
    except (SeriesJsonError, OSError) as error:
        reason = error.strerror if isinstance(error, OSError) else str(error)
        db.execute(
            "INSERT OR REPLACE INTO problems VALUES(?, 'warning', '', ?)",
            (relpath, f"series.json ignored: {reason}"),
        )
        return None


@dataclass
class SeriesFacts:
    """What the series row says, decided from series.json, ComicInfo and the name."""

    title: str
    alternatives: list[str]
    synopsis: str | None
    writers: list[str]
    artists: list[str]
    publisher: str | None
    year: int | None
    status: Publication
    classification: Classification
    #: Every language a chapter is in, sorted.
    languages: list[str]
    original_language: str
    genres: list[str]
    tags: list[str]
    #: ComicInfo's ``<Manga>`` as a reading direction, when most chapters say one.
    reading_direction: str | None = None


def _decide_facts(
    series: FoundSeries, rows: Sequence[Mapping[str, Any]], series_json: SeriesJson | None
) -> SeriesFacts:
    # Each field of an empty SeriesJson is None: "series.json says nothing".
    given = series_json or SeriesJson()
    # A series' chapters mostly carry the same hints, in the same text (the reading encodes
    # a run of them once): each text is decoded and looked through once, in the order the
    # chapters first carry it, and counts for as many chapters as carry it.
    carried = Counter([row["info"] for row in rows])
    infos: list[dict[str, Any]] = [json.loads(text) for text in carried]
    chapters = list(carried.values())
    folder_title, folder_year = fallback_title(series)
    if series.is_file:
        folder_title = infos[0].get("name_series") or folder_title
    comicinfo_title = md.most_common([i.get("series") for i in infos], chapters)
    title = given.name or comicinfo_title or folder_title
    alternatives = md.unique(
        [i.get("alt") for i in infos] + [comicinfo_title, folder_title, given.name]
    )
    years = [i["year"] for i in infos if i.get("year")]
    classification = md.classification(given.age_rating)
    if classification is Classification.UNKNOWN:
        classification = md.strictest(i.get("age_rating") for i in infos)
    languages = sorted({row["language"] for row in rows})
    return SeriesFacts(
        title=title,
        alternatives=[a for a in alternatives if a.lower() != title.lower()],
        synopsis=given.description or next((i["summary"] for i in infos if i.get("summary")), None),
        writers=md.unique(w for i in infos for w in i.get("writers") or []),
        artists=md.unique(a for i in infos for a in i.get("artists") or []),
        publisher=given.publisher or md.most_common([i.get("publisher") for i in infos], chapters),
        year=given.year or (min(years) if years else None) or folder_year,
        status=md.publication(given.status),
        classification=classification,
        languages=languages,
        original_language=_original_language(languages, [row["language"] for row in rows]),
        # Exact repeats dropped first: twenty chapters usually repeat the same few names,
        # and slugging each of them again was a tenth of a first scan.
        genres=md.unique(_distinct(g for i in infos for g in i.get("genres") or []), key="slug"),
        tags=md.unique(_distinct(t for i in infos for t in i.get("tags") or []), key="slug"),
        reading_direction=md.reading_direction(
            md.most_common([i.get("manga") for i in infos], chapters)
        ),
    )


def _distinct(values: Iterable[str]) -> list[str]:
    """Values without exact repeats, first occurrence first."""
    return list(dict.fromkeys(values))


def _original_language(languages: list[str], per_chapter: list[str]) -> str:
    """The language most chapters are in; ties go to the first in sorted order."""
    return max(languages, key=lambda lang: (per_chapter.count(lang), -languages.index(lang)))


def _cover(series: FoundSeries, rows: Sequence[Mapping[str, Any]]) -> Cover:
    """The folder's cover image if it has one, else the first page of the first chapter."""
    if series.cover is not None:
        relpath, sig = series.cover
        return relpath, "file", None, version_of(sig)
    first = rows[0]
    pages = json.loads(first["pages"])
    return first["relpath"], first["kind"], pages[0], version_of(first["sig"])


def _update_series_row(
    db: sqlite3.Connection,
    sid: int,
    series: FoundSeries,
    rows: Sequence[Mapping[str, Any]],
    facts: SeriesFacts,
    series_json: SeriesJson | None,
) -> None:
    db.execute(
        """UPDATE series SET title=?, sort_title=?, alt_titles=?, synopsis=?, writers=?, artists=?,
           publisher=?, year=?, status=?, classification=?, original_language=?, genres=?, tags=?,
           cover_relpath=?, cover_kind=?, cover_member=?, cover_version=?, created_at=?,
           updated_at=?, latest_at=?, chapter_count=?, meta_sig=?, series_json=?,
           reading_direction=? WHERE id=?""",
        (
            facts.title,
            facts.title.casefold(),
            json.dumps(facts.alternatives),
            facts.synopsis,
            json.dumps(facts.writers),
            json.dumps(facts.artists),
            facts.publisher,
            facts.year,
            facts.status.value,
            facts.classification.value,
            facts.original_language,
            json.dumps(facts.genres),
            json.dumps(facts.tags),
            *_cover(series, rows),
            min(row["first_seen"] for row in rows),
            max(row["first_seen"] for row in rows),
            max(row["date"] for row in rows),
            len({row["number"] for row in rows}),
            series.meta_sig,
            # Cached so an unchanged series.json is not reread; {} means "there is none".
            json.dumps(series_json.__dict__ if series_json else {}),
            facts.reading_direction,
            sid,
        ),
    )


def _search_terms(facts: SeriesFacts) -> set[tuple[str, str]]:
    """``(kind, value)`` pairs that search filters match exactly."""
    terms: set[tuple[str, str]] = set()
    terms |= {("genre", md.tag_slug(g)) for g in facts.genres}
    terms |= {("tag", md.tag_slug(t)) for t in [*facts.genres, *facts.tags]}
    terms |= {("writer", w.casefold()) for w in facts.writers}
    terms |= {("artist", a.casefold()) for a in facts.artists}
    terms |= {("lang", lang.casefold()) for lang in facts.languages}
    terms.add(("olang", facts.original_language.casefold()))
    if facts.publisher:
        terms.add(("publisher", facts.publisher.casefold()))
    return terms


def _replace_search_terms(db: sqlite3.Connection, sid: int, facts: SeriesFacts) -> None:
    db.execute("DELETE FROM series_terms WHERE series_id = ?", (sid,))
    db.executemany(
        "INSERT OR IGNORE INTO series_terms(series_id, kind, value) VALUES(?, ?, ?)",
        [(sid, kind, value) for kind, value in sorted(_search_terms(facts))],
    )


def _replace_search_text(db: sqlite3.Connection, sid: int, facts: SeriesFacts) -> None:
    """The full-text row: titles and people, for free-text search."""
    db.execute("DELETE FROM series_fts WHERE rowid = ?", (sid,))
    db.execute(
        "INSERT INTO series_fts(rowid, title, alt_titles, people) VALUES(?, ?, ?, ?)",
        (
            sid,
            facts.title,
            " ; ".join(facts.alternatives),
            " ; ".join([*facts.writers, *facts.artists]),
        ),
    )


def refresh_tag_names(db: sqlite3.Connection) -> None:
    """Rebuild the library's tag list (slug, display name, NSFW flag) from all series.

    Of the spellings that share a slug, the smallest (cut to 50 characters) is
    shown, so the choice does not depend on scan order.
    """
    names: dict[str, str] = {}
    for row in db.execute("SELECT genres, tags FROM series ORDER BY relpath"):
        for name in [*json.loads(row["genres"]), *json.loads(row["tags"])]:
            slug = md.tag_slug(name)
            label = name[:50]
            if slug not in names or label < names[slug]:
                names[slug] = label
    db.execute("DELETE FROM tag_names")
    db.executemany(
        "INSERT INTO tag_names VALUES(?, ?, ?)",
        [(slug, name, int(md.is_nsfw_tag(name))) for slug, name in sorted(names.items())],
    )
