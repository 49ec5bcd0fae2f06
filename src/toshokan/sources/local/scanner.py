"""Walking the library folder and keeping the index in step with it.

A scan lists every candidate chapter with a cheap signature (size and mtime,
or for an image folder, the sizes and mtimes of its files) and opens only
those whose signature changed since the last scan, so a 100,000-chapter
library is not re-read on every start. Files that cannot be used are recorded
with a reason (and their signature, so a broken file is not re-opened either)
and shown in the scan summary. Nothing here raises for bad input; only an
unreadable library root is an error.
"""

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toshokan.sources.local import metadata as md
from toshokan.sources.local.archives import ArchiveError, kind_of, open_chapter
from toshokan.sources.local.comicinfo import (
    MAX_COMICINFO_BYTES,
    ComicInfo,
    MetadataError,
    parse_comicinfo,
)
from toshokan.sources.local.index import Index, now
from toshokan.sources.local.names import (
    format_number,
    is_image_name,
    parse_chapter_name,
    parse_series_name,
)
from toshokan.sources.local.seriesjson import SeriesJson, SeriesJsonError, parse_series_json
from toshokan.sources.local.slugs import assign, chapter_base_slug, series_base_slug

MAX_DEPTH = 6
COVER_STEMS = ("cover", "folder", "poster")
#: Commit after this many chapters, so readers see progress of a long first scan.
BATCH = 500

Progress = Callable[[int, int], None]


class LibraryUnavailable(Exception):
    """The library root itself cannot be read."""


@dataclass
class FoundChapter:
    relpath: str
    kind: str
    sig: str
    mtime: float


@dataclass
class FoundSeries:
    relpath: str
    is_file: bool
    chapters: list[FoundChapter] = field(default_factory=list)
    series_json: tuple[str, str] | None = None
    cover: tuple[str, str] | None = None

    @property
    def meta_sig(self) -> str:
        return json.dumps([self.series_json, self.cover])


@dataclass
class ScanReport:
    """What a scan did, and what the library holds now."""

    series: int = 0
    chapters: int = 0
    read: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    def summary(self) -> str:
        lines = [
            f"Indexed {self.series} series, {self.chapters} chapters "
            f"({self.read} read this scan: {self.added} added, {self.updated} updated, "
            f"{self.removed} removed).",
        ]
        if self.skipped:
            lines.append(f"Skipped {len(self.skipped)}:")
            lines += [f"  {path}: {reason}" for path, reason in self.skipped]
        else:
            lines.append("Skipped nothing.")
        if self.warnings:
            lines.append(f"Warnings {len(self.warnings)}:")
            lines += [f"  {path}: {reason}" for path, reason in self.warnings]
        return "\n".join(lines)


def _stat_sig(stat: os.stat_result) -> str:
    return f"{stat.st_size}:{stat.st_mtime_ns}"


class Scanner:
    """Brings the index up to date with the folder; one scan at a time."""

    def __init__(
        self,
        root: Path,
        index: Index,
        *,
        default_language: str = "en",
        comicinfo_limit: int = MAX_COMICINFO_BYTES,
    ):
        self.root = root.resolve()
        self.index = index
        self.default_language = default_language
        self.comicinfo_limit = comicinfo_limit
        #: Chapters opened since this scanner was made (tests assert on it).
        self.reads = 0
        #: series.json files parsed since this scanner was made.
        self.metadata_reads = 0
        self._lock = threading.Lock()
        #: The index's own files, never taken for library content if kept inside the root.
        self.own_files = index.files()

    # -- walking -----------------------------------------------------------------

    def _inside(self, path: Path) -> bool:
        try:
            return path.resolve().is_relative_to(self.root)
        except (OSError, RuntimeError):
            return False

    def _link_problem(self, entry: os.DirEntry[str]) -> str | None:
        if not entry.is_symlink():
            return None
        target = Path(entry.path)
        if not target.exists():
            return "broken symlink"
        if not self._inside(target):
            return "symlink points outside the library root; not followed"
        return None

    def walk(self, only: set[str] | None = None) -> tuple[dict[str, FoundSeries], dict[str, str]]:
        """Every series and chapter candidate, and the files skipped while walking."""
        found: dict[str, FoundSeries] = {}
        problems: dict[str, str] = {}
        try:
            entries = sorted(os.scandir(self.root), key=lambda e: e.name)
        except OSError as error:
            raise LibraryUnavailable(
                f"the library folder {self.root} cannot be read ({error.strerror})"
            ) from None
        visited = {str(self.root)}
        for entry in entries:
            if entry.name.startswith(".") or (only is not None and entry.name not in only):
                continue
            if entry.path in self.own_files:
                continue
            rel = entry.name
            try:
                problem = self._link_problem(entry)
                if problem:
                    problems[rel] = problem
                elif entry.is_dir():
                    series = FoundSeries(rel, False)
                    visited.add(str(Path(entry.path).resolve()))
                    self._walk_series(Path(entry.path), rel, series, problems, visited, 0)
                    if series.chapters:
                        found[rel] = series
                    elif not any(p == rel or p.startswith(rel + "/") for p in problems):
                        problems[rel] = "series folder has no chapters"
                elif entry.is_file():
                    kind = kind_of(Path(entry.name))
                    if kind:
                        stat = entry.stat()
                        chapter = FoundChapter(rel, kind, _stat_sig(stat), stat.st_mtime)
                        found[rel] = FoundSeries(rel, True, [chapter])
                    elif is_image_name(entry.name):
                        problems[rel] = "image directly in the library root; put pages in a folder"
                    else:
                        problems[rel] = "not a chapter: unsupported file type"
            except OSError as error:
                problems[rel] = f"cannot be read ({error.strerror})"
        return found, problems

    def _walk_series(
        self,
        folder: Path,
        rel: str,
        series: FoundSeries,
        problems: dict[str, str],
        visited: set[str],
        depth: int,
    ) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as error:
            problems[rel] = f"folder cannot be listed ({error.strerror})"
            return
        images: list[tuple[str, int, int]] = []
        comicinfo: tuple[int, int] | None = None
        for entry in entries:
            name = entry.name
            if name.startswith(".") or entry.path in self.own_files:
                continue
            erel = f"{rel}/{name}"
            try:
                problem = self._link_problem(entry)
                if problem:
                    problems[erel] = problem
                    continue
                if entry.is_dir():
                    real = str(Path(entry.path).resolve())
                    if real in visited:
                        problems[erel] = "folder already scanned (symlink loop); skipped"
                    elif depth >= MAX_DEPTH:
                        problems[erel] = f"folder nested deeper than {MAX_DEPTH} levels; skipped"
                    else:
                        visited.add(real)
                        self._walk_series(
                            Path(entry.path), erel, series, problems, visited, depth + 1
                        )
                    continue
                if not entry.is_file():
                    problems[erel] = "not a regular file"
                    continue
                stat = entry.stat()
                lower = name.lower()
                kind = kind_of(Path(name))
                if kind:
                    series.chapters.append(FoundChapter(erel, kind, _stat_sig(stat), stat.st_mtime))
                elif is_image_name(name):
                    stem = lower.rsplit(".", 1)[0]
                    if depth == 0 and stem in COVER_STEMS:
                        if series.cover is None or stem == "cover":
                            series.cover = (erel, _stat_sig(stat))
                        continue
                    images.append((name, stat.st_size, stat.st_mtime_ns))
                elif depth == 0 and lower == "series.json":
                    series.series_json = (erel, _stat_sig(stat))
                elif lower == "comicinfo.xml":
                    comicinfo = (stat.st_size, stat.st_mtime_ns)
                else:
                    problems[erel] = "not a chapter or page: unsupported file type"
            except OSError as error:
                problems[erel] = f"cannot be read ({error.strerror})"
        if images:
            digest = hashlib.sha1(json.dumps([images, comicinfo]).encode()).hexdigest()[:20]
            mtime = max(m for _, _, m in images) / 1e9
            series.chapters.append(FoundChapter(rel, "dir", f"dir:{digest}", mtime))

    # -- reading -----------------------------------------------------------------

    def read_chapter(
        self, chapter: FoundChapter
    ) -> tuple[dict[str, Any] | None, str | None, list[str]]:
        """Open one chapter: (record for the index, or None and the reason it was skipped; warnings)."""
        self.reads += 1
        path = self.root / chapter.relpath
        if not self._inside(path):
            return None, "points outside the library root", []
        try:
            with open_chapter(path.resolve(), chapter.kind, self.root) as reader:
                listing = reader.listing(comicinfo_limit=self.comicinfo_limit)
        except ArchiveError as error:
            return None, f"unreadable chapter: {error}", []
        except Exception as error:  # a damaged file must never stop the scan
            return None, f"unreadable chapter ({type(error).__name__})", []
        warnings = list(listing.warnings)
        if not listing.pages:
            return None, "contains no images", warnings
        info = ComicInfo()
        if listing.comicinfo is not None:
            try:
                info = parse_comicinfo(listing.comicinfo, max_bytes=self.comicinfo_limit)
            except MetadataError as error:
                warnings.append(f"{error}; using the file name instead")
        return self._record(chapter, listing.pages, info), None, warnings

    def _record(self, chapter: FoundChapter, pages: list[Any], info: ComicInfo) -> dict[str, Any]:
        filename = chapter.relpath.rsplit("/", 1)[-1]
        name = parse_chapter_name(filename)
        number = info.number if info.number is not None else name.number
        volume = info.volume if info.volume is not None else name.volume
        language = (info.language or self.default_language).strip() or self.default_language
        scanlator = info.scanlator or name.group
        title = info.title or name.title
        if not title:
            if number is not None and volume is not None and name.number is not None:
                title = f"Vol. {format_number(volume)} Ch. {format_number(number)}"
            elif number is not None:
                title = (
                    "Oneshot"
                    if name.oneshot and number == 0
                    else f"Chapter {format_number(number)}"
                )
            elif volume is not None:
                title = f"Volume {format_number(volume)}"
            elif name.oneshot:
                title = "Oneshot"
        base = chapter_base_slug(
            number=number,
            volume=volume,
            oneshot=name.oneshot,
            group=scanlator,
            language=language,
            default_language=self.default_language,
            stem=filename.rsplit(".", 1)[0] if chapter.kind != "dir" else filename,
        )
        effective = number if number is not None else (volume if volume is not None else 0.0)
        series_info = {
            "series": info.series,
            "alt": info.alternate_series,
            "summary": info.summary,
            "writers": info.writers,
            "artists": info.artists,
            "genres": info.genres,
            "tags": info.tags,
            "publisher": info.publisher,
            "year": info.year,
            "age_rating": info.age_rating,
            "name_series": name.series,
        }
        return {
            "relpath": chapter.relpath,
            "kind": chapter.kind,
            "sig": chapter.sig,
            "base_slug": base,
            "number": float(effective),
            "volume": volume,
            "title": title or "",
            "date": info.date.timestamp() if info.date else chapter.mtime,
            "mtime": chapter.mtime,
            "language": language,
            "scanlator": scanlator,
            "web": info.web,
            "pages": json.dumps([m.name for m in pages]),
            "page_count": len(pages),
            "info": json.dumps(series_info),
        }

    # -- the scan ------------------------------------------------------------------

    def scan(self, only: set[str] | None = None, progress: Progress | None = None) -> ScanReport:
        """Bring the index up to date; ``only`` limits the scan to these top-level names."""
        with self._lock:
            found, walk_problems = self.walk(only)
            with self.index.writer() as db:
                return self._apply(db, found, walk_problems, only, progress)

    def _in_scope(self, relpath: str, only: set[str] | None) -> bool:
        return only is None or relpath.split("/", 1)[0] in only

    def _apply(
        self,
        db: sqlite3.Connection,
        found: dict[str, FoundSeries],
        walk_problems: dict[str, str],
        only: set[str] | None,
        progress: Progress | None,
    ) -> ScanReport:
        report = ScanReport()
        existing_series = {
            row["relpath"]: row
            for row in db.execute("SELECT id, relpath, meta_sig, series_json FROM series")
            if self._in_scope(row["relpath"], only)
        }
        existing_chapters = {
            row["relpath"]: row
            for row in db.execute("SELECT id, relpath, sig, series_id FROM chapters")
            if self._in_scope(row["relpath"], only)
        }
        skipped_sigs = {
            row["relpath"]: row["sig"]
            for row in db.execute("SELECT relpath, sig FROM problems WHERE severity = 'skipped'")
            if self._in_scope(row["relpath"], only)
        }
        series_ids = {row["relpath"]: row["id"] for row in existing_series.values()}

        def needs_read(chapter: FoundChapter, old: sqlite3.Row | None) -> bool:
            if old is not None and old["sig"] == chapter.sig:
                return False
            return skipped_sigs.get(chapter.relpath) != chapter.sig

        total = sum(
            needs_read(c, existing_chapters.get(c.relpath))
            for s in found.values()
            for c in s.chapters
        )
        done = 0
        if progress:
            progress(0, total)

        db.execute("BEGIN")
        # Files found unusable while walking are recorded afresh each scan.
        for relpath in [r for r in _walk_problem_paths(db) if self._in_scope(r, only)]:
            db.execute("DELETE FROM problems WHERE relpath = ? AND severity = 'walk'", (relpath,))
        for relpath, why in walk_problems.items():
            db.execute(
                "INSERT OR REPLACE INTO problems(relpath, severity, sig, reason) VALUES(?, 'walk', '', ?)",
                (relpath, why),
            )

        series_set_changed = False
        changed_series: set[int] = set()
        pending = 0
        for series in sorted(found.values(), key=lambda s: s.relpath):
            sid = series_ids.get(series.relpath)
            old_series = existing_series.get(series.relpath)
            if old_series is not None and old_series["meta_sig"] != series.meta_sig:
                changed_series.add(old_series["id"])
            for chapter in series.chapters:
                old = existing_chapters.pop(chapter.relpath, None)
                if old is not None and old["series_id"] != sid:
                    db.execute("DELETE FROM chapters WHERE id = ?", (old["id"],))
                    changed_series.add(old["series_id"])
                    old = None
                if not needs_read(chapter, old):
                    continue
                record, reason, warnings = self.read_chapter(chapter)
                done += 1
                pending += 1
                if progress:
                    progress(done, total)
                db.execute(
                    "DELETE FROM problems WHERE relpath = ? AND severity != 'walk'",
                    (chapter.relpath,),
                )
                for warning in warnings:
                    db.execute(
                        "INSERT OR REPLACE INTO problems VALUES(?, 'warning', ?, ?)",
                        (chapter.relpath, chapter.sig, warning),
                    )
                if record is None:
                    db.execute(
                        "INSERT OR REPLACE INTO problems VALUES(?, 'skipped', ?, ?)",
                        (chapter.relpath, chapter.sig, reason or "skipped"),
                    )
                    if old is not None:
                        db.execute("DELETE FROM chapters WHERE id = ?", (old["id"],))
                        report.removed += 1
                else:
                    if sid is None:
                        # A series row exists only once one of its chapters is usable.
                        sid = self._insert_series(db, series)
                        series_ids[series.relpath] = sid
                        series_set_changed = True
                    record["series_id"] = sid
                    _upsert_chapter(db, record)
                    if old is None:
                        report.added += 1
                    else:
                        report.updated += 1
                if sid is not None:
                    changed_series.add(sid)
                if pending >= BATCH:
                    db.execute("COMMIT")
                    db.execute("BEGIN")
                    pending = 0

        # Chapters that disappeared (in the scanned scope).
        for old in existing_chapters.values():
            db.execute("DELETE FROM chapters WHERE id = ?", (old["id"],))
            changed_series.add(old["series_id"])
            report.removed += 1
        live = {series.relpath for series in found.values()}
        for relpath in [r for r in _chapter_problem_paths(db) if self._in_scope(r, only)]:
            if not _still_found(found, relpath):
                db.execute(
                    "DELETE FROM problems WHERE relpath = ? AND severity != 'walk'", (relpath,)
                )
        for relpath, row in existing_series.items():
            if relpath not in live:
                db.execute("DELETE FROM series_fts WHERE rowid = ?", (row["id"],))
                db.execute("DELETE FROM series WHERE id = ?", (row["id"],))
                changed_series.discard(row["id"])
                series_set_changed = True

        by_id = {series_ids[s.relpath]: s for s in found.values() if s.relpath in series_ids}
        for sid in sorted(changed_series):
            touched = by_id.get(sid)
            if touched is None:
                continue
            if not self._aggregate(db, sid, touched):
                series_set_changed = True
        if series_set_changed:
            self._assign_series_slugs(db)
        if changed_series or series_set_changed:
            self._refresh_tags(db)
        if report.changed or changed_series or series_set_changed:
            db.execute("INSERT OR REPLACE INTO meta VALUES('updated_at', ?)", (str(now()),))
        db.execute("COMMIT")

        counts = db.execute(
            "SELECT (SELECT count(*) FROM series), (SELECT count(*) FROM chapters)"
        ).fetchone()
        report.series, report.chapters = counts[0], counts[1]
        report.read = done
        for row in db.execute(
            "SELECT relpath, severity, reason FROM problems ORDER BY relpath, reason"
        ):
            target = report.warnings if row["severity"] == "warning" else report.skipped
            target.append((row["relpath"], row["reason"]))
        return report

    # -- series ------------------------------------------------------------------

    def _fallback_title(self, series: FoundSeries) -> tuple[str, int | None]:
        name = series.relpath
        if series.is_file:
            parsed = parse_chapter_name(name)
            stem = name.rsplit(".", 1)[0]
            return parsed.series or stem, parsed.year
        folder = parse_series_name(name)
        return folder.title, folder.year

    def _insert_series(self, db: sqlite3.Connection, series: FoundSeries) -> int:
        title, _ = self._fallback_title(series)
        cursor = db.execute(
            "INSERT INTO series(relpath, base_slug, title, sort_title) VALUES(?, ?, ?, ?)",
            (series.relpath, series_base_slug(title), title, title.casefold()),
        )
        return int(cursor.lastrowid or 0)

    def _series_json(
        self, db: sqlite3.Connection, sid: int, series: FoundSeries
    ) -> SeriesJson | None:
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
        path = self.root / relpath
        self.metadata_reads += 1
        try:
            if not self._inside(path):
                raise SeriesJsonError("series.json points outside the library root")
            with path.open("rb") as stream:
                data = stream.read(256 * 1024 + 1)
            return parse_series_json(data)
        except (SeriesJsonError, OSError) as error:
            reason = error.strerror if isinstance(error, OSError) else str(error)
            db.execute(
                "INSERT OR REPLACE INTO problems VALUES(?, 'warning', '', ?)",
                (relpath, f"series.json ignored: {reason}"),
            )
            return None

    def _aggregate(self, db: sqlite3.Connection, sid: int, series: FoundSeries) -> bool:
        """Recompute a series row from its chapters; False when it has none left (deleted)."""
        rows = db.execute(
            "SELECT * FROM chapters WHERE series_id = ? ORDER BY number, relpath", (sid,)
        ).fetchall()
        if not rows:
            db.execute("DELETE FROM series_fts WHERE rowid = ?", (sid,))
            db.execute("DELETE FROM series WHERE id = ?", (sid,))
            return False
        sj = self._series_json(db, sid, series)
        infos = [json.loads(row["info"]) for row in rows]
        folder_title, folder_year = self._fallback_title(series)
        if series.is_file:
            folder_title = infos[0].get("name_series") or folder_title
        ci_title = md.most_common(i.get("series") for i in infos)
        title = (sj.name if sj else None) or ci_title or folder_title
        alternatives = md.unique(
            [i.get("alt") for i in infos] + [ci_title, folder_title, sj.name if sj else None]
        )
        alternatives = [a for a in alternatives if a.lower() != title.lower()]
        synopsis = (sj.description if sj else None) or next(
            (i["summary"] for i in infos if i.get("summary")), None
        )
        writers = md.unique(w for i in infos for w in i.get("writers") or [])
        artists = md.unique(a for i in infos for a in i.get("artists") or [])
        genres = md.unique((g for i in infos for g in i.get("genres") or []), key="slug")
        tags = md.unique((t for i in infos for t in i.get("tags") or []), key="slug")
        publisher = (sj.publisher if sj else None) or md.most_common(
            i.get("publisher") for i in infos
        )
        years = [i["year"] for i in infos if i.get("year")]
        year = (sj.year if sj else None) or (min(years) if years else None) or folder_year
        status = md.publication(sj.status if sj else None)
        rating = md.classification(sj.age_rating if sj else None)
        if rating is md.Classification.UNKNOWN:
            rating = md.strictest(i.get("age_rating") for i in infos)
        languages = sorted({row["language"] for row in rows})
        language_counts = [row["language"] for row in rows]
        original = max(
            languages, key=lambda lang: (language_counts.count(lang), -languages.index(lang))
        )
        if series.cover is not None:
            cover = (
                series.cover[0],
                "file",
                None,
                hashlib.sha1(series.cover[1].encode()).hexdigest()[:12],
            )
        else:
            first = rows[0]
            pages = json.loads(first["pages"])
            cover = (
                first["relpath"],
                first["kind"],
                pages[0],
                hashlib.sha1(first["sig"].encode()).hexdigest()[:12],
            )
        db.execute(
            """UPDATE series SET title=?, sort_title=?, alt_titles=?, synopsis=?, writers=?, artists=?,
               publisher=?, year=?, status=?, classification=?, original_language=?, genres=?, tags=?,
               cover_relpath=?, cover_kind=?, cover_member=?, cover_version=?, created_at=?,
               updated_at=?, latest_at=?, chapter_count=?, meta_sig=?, series_json=? WHERE id=?""",
            (
                title,
                title.casefold(),
                json.dumps(alternatives),
                synopsis,
                json.dumps(writers),
                json.dumps(artists),
                publisher,
                year,
                status.value,
                rating.value,
                original,
                json.dumps(genres),
                json.dumps(tags),
                *cover,
                min(row["mtime"] for row in rows),
                max(row["mtime"] for row in rows),
                max(row["date"] for row in rows),
                len({row["number"] for row in rows}),
                series.meta_sig,
                json.dumps(sj.__dict__ if sj else {}),
                sid,
            ),
        )
        db.execute("DELETE FROM series_terms WHERE series_id = ?", (sid,))
        terms: set[tuple[str, str]] = set()
        terms |= {("genre", md.tag_slug(g)) for g in genres}
        terms |= {("tag", md.tag_slug(t)) for t in [*genres, *tags]}
        terms |= {("writer", w.casefold()) for w in writers}
        terms |= {("artist", a.casefold()) for a in artists}
        terms |= {("lang", lang.casefold()) for lang in languages}
        terms.add(("olang", original.casefold()))
        if publisher:
            terms.add(("publisher", publisher.casefold()))
        db.executemany(
            "INSERT OR IGNORE INTO series_terms(series_id, kind, value) VALUES(?, ?, ?)",
            [(sid, kind, value) for kind, value in sorted(terms)],
        )
        db.execute("DELETE FROM series_fts WHERE rowid = ?", (sid,))
        db.execute(
            "INSERT INTO series_fts(rowid, title, alt_titles, people) VALUES(?, ?, ?, ?)",
            (sid, title, " ; ".join(alternatives), " ; ".join([*writers, *artists])),
        )
        self._assign_chapter_slugs(db, sid, rows)
        return True

    def _assign_chapter_slugs(
        self, db: sqlite3.Connection, sid: int, rows: list[sqlite3.Row]
    ) -> None:
        wanted = assign((row["relpath"], row["base_slug"]) for row in rows)
        changed = [row for row in rows if row["slug"] != wanted[row["relpath"]]]
        for row in changed:
            db.execute("UPDATE chapters SET slug = NULL WHERE id = ?", (row["id"],))
        for row in changed:
            db.execute(
                "UPDATE chapters SET slug = ? WHERE id = ?", (wanted[row["relpath"]], row["id"])
            )

    def _assign_series_slugs(self, db: sqlite3.Connection) -> None:
        rows = db.execute("SELECT id, relpath, base_slug, slug FROM series").fetchall()
        wanted = assign((row["relpath"], row["base_slug"]) for row in rows)
        changed = [row for row in rows if row["slug"] != wanted[row["relpath"]]]
        for row in changed:
            db.execute("UPDATE series SET slug = NULL WHERE id = ?", (row["id"],))
        for row in changed:
            db.execute(
                "UPDATE series SET slug = ? WHERE id = ?", (wanted[row["relpath"]], row["id"])
            )

    def _refresh_tags(self, db: sqlite3.Connection) -> None:
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


def _upsert_chapter(db: sqlite3.Connection, record: dict[str, Any]) -> None:
    columns = list(record)
    placeholders = ", ".join(f":{c}" for c in columns)
    updates = ", ".join(f"{c}=excluded.{c}" for c in columns if c != "relpath")
    db.execute(
        f"INSERT INTO chapters({', '.join(columns)}) VALUES({placeholders}) "
        f"ON CONFLICT(relpath) DO UPDATE SET {updates}",
        record,
    )


def _walk_problem_paths(db: sqlite3.Connection) -> list[str]:
    return [row[0] for row in db.execute("SELECT relpath FROM problems WHERE severity = 'walk'")]


def _chapter_problem_paths(db: sqlite3.Connection) -> list[str]:
    return [
        row[0]
        for row in db.execute("SELECT DISTINCT relpath FROM problems WHERE severity != 'walk'")
    ]


def _still_found(found: dict[str, FoundSeries], relpath: str) -> bool:
    top = relpath.split("/", 1)[0]
    series = found.get(top)
    if series is None:
        return False
    if series.series_json and series.series_json[0] == relpath:
        return True
    return any(c.relpath == relpath for c in series.chapters)
