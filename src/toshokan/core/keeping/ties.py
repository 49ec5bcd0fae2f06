"""Ties between kept copies and their originals: one chapter, wherever it is read.

When the host keeps a chapter it records, before the file is moved into place,
a tie from the upstream chapter (source, manga, chapter slugs) to the kept file
(the library's source slug, the file's path under the keep folder and its
KOReader id, the partial MD5). The library names the file's chapter only once
it has indexed it; the tie then learns the local manga and chapter slugs
(:meth:`Ties.resolve`), and from then on the two are one chapter to the
progress store: a reader's place written on either is written on the other
(:meth:`Ties.others`, called by :class:`~toshokan.core.progress.ProgressStore`
in the same transaction), and the places already recorded on either side when
the tie resolves are copied across, the newer one winning as with every write.

A kept series is tied to its upstream series the same way: its folder is chosen
once (``kept_series``), and the library's series is known as the copy of its
original (:meth:`Ties.original_series`), so following either is following one
series; a reader who followed the library's series before it was known as a copy
(before its first tie resolved) follows its original from then on, once.
Nothing here deletes: an upstream that removes the chapter or the series
leaves the file, its tie and its progress as they are.
"""

import time
from dataclasses import dataclass, replace
from typing import Any

from toshokan.core.database import Cursor, Database
from toshokan.core.follows.store import merge_series
from toshokan.core.progress.store import ChapterRef

_TIE = (
    "source, manga, chapter, library, path, document, local_manga, local_chapter, pages, "
    "bytes, kept"
)
#: A position is copied across unless the other side's is newer (or it is inferred), as
#: :meth:`ProgressStore.record` decides for every explicit write.
_COPY = (
    "INSERT INTO progress(reader, source, manga, chapter, page, pages, finished, updated, "
    "device_id, device, progression, inferred) SELECT reader, ?, ?, ?, page, pages, finished, "
    "updated, device_id, device, progression, inferred FROM progress "
    "WHERE source = ? AND manga = ? AND chapter = ? "
    "ON CONFLICT(reader, source, manga, chapter) DO UPDATE SET page = excluded.page, "
    "pages = excluded.pages, finished = excluded.finished, updated = excluded.updated, "
    "device_id = excluded.device_id, device = excluded.device, "
    "progression = excluded.progression, inferred = excluded.inferred "
    "WHERE excluded.updated > progress.updated"
)


@dataclass(frozen=True)
class Tie:
    """A kept chapter and its original. ``local_manga`` and ``local_chapter`` are empty
    until the library indexed the file."""

    source: str
    manga: str
    chapter: str
    library: str
    path: str
    document: str
    local_manga: str
    local_chapter: str
    pages: int
    bytes: int
    kept: float

    @property
    def original(self) -> ChapterRef:
        return ChapterRef(self.source, self.manga, self.chapter)

    @property
    def copy(self) -> ChapterRef | None:
        if not self.local_chapter:
            return None
        return ChapterRef(self.library, self.local_manga, self.local_chapter)


def _tie(row: Any) -> Tie:
    source, manga, chapter, library, path, document, local_manga, local_chapter = row[:8]
    pages, size, kept = row[8:]
    return Tie(
        source,
        manga,
        chapter,
        library,
        path,
        document,
        local_manga,
        local_chapter,
        int(pages),
        int(size),
        float(kept),
    )


class Ties:
    """The ties in the host's database (SQLite or PostgreSQL). Blocking: run in a thread."""

    def __init__(self, database: Database):
        self.database = database

    # -- series ------------------------------------------------------------------------

    def series_folder(self, source: str, manga: str) -> str | None:
        """The folder a kept series of ``source`` was given, if it has one."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT folder FROM kept_series WHERE source = ? AND manga = ?", (source, manga)
            )
            row = cursor.fetchone()
        return None if row is None else str(row[0])

    def claim_folder(self, source: str, manga: str, library: str, folder: str) -> bool:
        """Tie ``folder`` to the series, unless another series has it; whether it is this one's."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "INSERT INTO kept_series(source, manga, library, folder, kept) "
                "VALUES(?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (source, manga, library, folder, time.time()),
            )
            cursor.execute(
                "SELECT source, manga FROM kept_series WHERE library = ? AND folder = ?",
                (library, folder),
            )
            row = cursor.fetchone()
        return row is not None and tuple(row) == (source, manga)

    def original_series(self, library: str, local_manga: str) -> tuple[str, str] | None:
        """The upstream series (source, manga) a series of the library is the kept copy of;
        None for a series of the library's own."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT source, manga FROM kept_chapters WHERE library = ? AND local_manga = ? "
                "ORDER BY kept LIMIT 1",
                (library, local_manga),
            )
            row = cursor.fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    # -- chapters ----------------------------------------------------------------------

    def of_chapter(self, source: str, manga: str, chapter: str) -> Tie | None:
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT {_TIE} FROM kept_chapters WHERE source = ? AND manga = ? AND chapter = ?",
                (source, manga, chapter),
            )
            row = cursor.fetchone()
        return None if row is None else _tie(row)

    def at_path(self, library: str, path: str) -> Tie | None:
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT {_TIE} FROM kept_chapters WHERE library = ? AND path = ?", (library, path)
            )
            row = cursor.fetchone()
        return None if row is None else _tie(row)

    def of_series(self, source: str, manga: str) -> list[Tie]:
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT {_TIE} FROM kept_chapters WHERE source = ? AND manga = ? ORDER BY kept",
                (source, manga),
            )
            rows = cursor.fetchall()
        return [_tie(row) for row in rows]

    def record(self, tie: Tie) -> None:
        """Tie a chapter's file (written again: its new file, to be indexed again)."""
        with self.database.transaction() as cursor:
            cursor.execute(
                f"INSERT INTO kept_chapters({_TIE}) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(source, manga, chapter) DO UPDATE SET library = excluded.library, "
                "path = excluded.path, document = excluded.document, local_manga = '', "
                "local_chapter = '', pages = excluded.pages, bytes = excluded.bytes, "
                "kept = excluded.kept",
                (
                    tie.source,
                    tie.manga,
                    tie.chapter,
                    tie.library,
                    tie.path,
                    tie.document,
                    "",
                    "",
                    tie.pages,
                    tie.bytes,
                    tie.kept,
                ),
            )

    def unresolved(self, library: str) -> list[Tie]:
        """Ties whose file the library has not named yet."""
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT {_TIE} FROM kept_chapters WHERE library = ? AND local_chapter = ''",
                (library,),
            )
            rows = cursor.fetchall()
        return [_tie(row) for row in rows]

    def resolve(self, tie: Tie, local_manga: str, local_chapter: str) -> Tie:
        """The library indexed the file as ``local_manga``/``local_chapter``: record it, copy
        every reader's place across, both ways, the newer winning, and make the follows of
        the library's series follows of the original."""
        resolved = replace(tie, local_manga=local_manga, local_chapter=local_chapter)
        copy = resolved.copy
        assert copy is not None
        with self.database.transaction() as cursor:
            cursor.execute(
                "UPDATE kept_chapters SET local_manga = ?, local_chapter = ? "
                "WHERE source = ? AND manga = ? AND chapter = ? AND document = ?",
                (local_manga, local_chapter, tie.source, tie.manga, tie.chapter, tie.document),
            )
            for into, out_of in ((copy, tie.original), (tie.original, copy)):
                cursor.execute(
                    _COPY,
                    (
                        into.source,
                        into.manga,
                        into.chapter,
                        out_of.source,
                        out_of.manga,
                        out_of.chapter,
                    ),
                )
            merge_series(cursor, (tie.library, local_manga), (tie.source, tie.manga))
        return resolved

    # -- progress ----------------------------------------------------------------------

    def others(self, cursor: Cursor, ref: ChapterRef) -> list[ChapterRef]:
        """The chapters tied to ``ref``, either way: where a place written on it is written too."""
        cursor.execute(
            "SELECT library, local_manga, local_chapter FROM kept_chapters "
            "WHERE source = ? AND manga = ? AND chapter = ? AND local_chapter <> '' "
            "UNION ALL SELECT source, manga, chapter FROM kept_chapters "
            "WHERE library = ? AND local_manga = ? AND local_chapter = ?",
            (ref.source, ref.manga, ref.chapter, ref.source, ref.manga, ref.chapter),
        )
        return [ChapterRef(*row) for row in cursor.fetchall()]
