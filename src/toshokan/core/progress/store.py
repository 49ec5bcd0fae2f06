"""Where each reader is in each chapter, and in books known only by a KOReader document id.

Every face that shows or records progress goes through :class:`ProgressStore`,
so the web reader, OPDS, the Komga API and KOReader all move one position.
A write carries its time (the client's, where the protocol has one) and an
older write never overwrites a newer one: the upserts only update ``WHERE``
the stored time is not newer, and say whether they did. A position *inferred*
from pages a reader streamed (OPDS-PSE readers preload pages ahead) only ever
moves forward, and never over a finished chapter; an explicit write always wins
over an inferred one, whatever the clocks say.

The methods are blocking (a database call); async code awaits the ``a``-prefixed
twins, which run them in a worker thread so the event loop never waits on disk.
"""

import asyncio
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from toshokan.core.database import Cursor, Database

#: The reader whose progress a host with no readers keeps: no account's name is empty.
IMPLICIT_READER = ""


@dataclass(frozen=True)
class ChapterRef:
    """A chapter as every face names it: source, manga and chapter slugs."""

    source: str
    manga: str
    chapter: str


@dataclass(frozen=True)
class Position:
    """How far a reader got in a chapter: page ``page`` of ``pages``, and when, where.

    ``page`` counts from 0, as the store does everywhere; each face shows its own
    protocol's base (PSE ``lastRead`` and Komga pages from 1, KOReader's page number).
    """

    page: int
    pages: int
    finished: bool
    updated: float
    device_id: str = ""
    device: str = ""
    #: The share of the chapter read (0 to 1) as the client that wrote this place put it, for
    #: protocols that carry one (OPDS and Readium progressions): given back as it was sent,
    #: since clients turn it into a page each their own way. None when the writer sent none.
    progression: float | None = None


@dataclass(frozen=True)
class DocumentPosition:
    """A KOReader position in a book the host does not hold, kept as KOReader's server keeps it."""

    progress: str
    percentage: float
    updated: float
    device_id: str = ""
    device: str = ""


#: The longest device name kept with a position.
MAX_DEVICE = 128


def device_of(headers: Mapping[str, str]) -> str:
    """The reading app, as its ``User-Agent`` names it, bounded: it is kept with each place a
    reader records."""
    return headers.get("user-agent", "")[:MAX_DEVICE]


_POSITION = "page, pages, finished, updated, device_id, device, progression"


def _position(row: Sequence[Any]) -> Position:
    page, pages, finished, updated, device_id, device, progression = row
    share = None if progression is None else float(progression)
    return Position(int(page), int(pages), bool(finished), float(updated), device_id, device, share)


class Linked(Protocol):
    """Chapters that are one chapter, read in two places (a kept copy and its original)."""

    def others(self, cursor: Cursor, ref: ChapterRef) -> list[ChapterRef]:
        """The chapters tied to ``ref``, asked inside the write's transaction."""
        ...


def _upsert(
    cursor: Cursor, reader: str, ref: ChapterRef, position: Position, inferred: bool
) -> bool:
    """The write :meth:`ProgressStore.record` makes, for one chapter; whether it stored it."""
    condition = (
        "excluded.page > progress.page AND progress.finished = 0"
        if inferred
        else "excluded.updated >= progress.updated OR progress.inferred = 1"
    )
    cursor.execute(
        "INSERT INTO progress(reader, source, manga, chapter, page, pages, finished, "
        "updated, device_id, device, progression, inferred) "
        "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(reader, source, manga, chapter) DO UPDATE SET page = excluded.page, "
        "pages = excluded.pages, finished = excluded.finished, updated = excluded.updated, "
        "device_id = excluded.device_id, device = excluded.device, "
        "progression = excluded.progression, "
        f"inferred = excluded.inferred WHERE {condition}",
        (
            reader,
            ref.source,
            ref.manga,
            ref.chapter,
            position.page,
            position.pages,
            int(position.finished),
            position.updated,
            position.device_id,
            position.device,
            position.progression,
            int(inferred),
        ),
    )
    return cursor.rowcount > 0


class ProgressStore:
    def __init__(self, database: Database):
        self.database = database
        #: Tied chapters (:mod:`toshokan.core.keeping.ties`): a write or a forgetting of one is
        #: one of them all, in the same transaction.
        self.linked: Linked | None = None

    def record(
        self, reader: str, ref: ChapterRef, position: Position, *, inferred: bool = False
    ) -> bool:
        """Store ``position`` unless a newer one is stored (or, ``inferred``, unless it is no
        further than the stored one); whether it was stored."""
        with self.database.transaction() as cursor:
            stored = _upsert(cursor, reader, ref, position, inferred)
            if stored and self.linked is not None:
                for other in self.linked.others(cursor, ref):
                    _upsert(cursor, reader, other, position, inferred)
            return stored

    def position(self, reader: str, ref: ChapterRef) -> Position | None:
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT {_POSITION} FROM progress "
                "WHERE reader = ? AND source = ? AND manga = ? AND chapter = ?",
                (reader, ref.source, ref.manga, ref.chapter),
            )
            row = cursor.fetchone()
        return None if row is None else _position(row)

    def positions(self, reader: str, source: str, manga: str) -> dict[str, Position]:
        """The reader's position in every chapter of one manga they opened, by chapter slug."""
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT chapter, {_POSITION} FROM progress "
                "WHERE reader = ? AND source = ? AND manga = ?",
                (reader, source, manga),
            )
            rows = cursor.fetchall()
        return {row[0]: _position(row[1:]) for row in rows}

    def forget(self, reader: str, ref: ChapterRef) -> bool:
        """Drop the reader's place in a chapter (marked unread); whether there was one."""
        with self.database.transaction() as cursor:
            linked = [] if self.linked is None else self.linked.others(cursor, ref)
            forgotten = False
            for chapter in (ref, *linked):
                cursor.execute(
                    "DELETE FROM progress "
                    "WHERE reader = ? AND source = ? AND manga = ? AND chapter = ?",
                    (reader, chapter.source, chapter.manga, chapter.chapter),
                )
                forgotten = forgotten or (chapter == ref and cursor.rowcount > 0)
            return forgotten

    def recent(self, reader: str, limit: int) -> list[tuple[ChapterRef, Position]]:
        """The reader's ``limit`` most recently moved chapters, newest first ("continue reading")."""
        with self.database.transaction() as cursor:
            cursor.execute(
                f"SELECT source, manga, chapter, {_POSITION} FROM progress "
                "WHERE reader = ? ORDER BY updated DESC LIMIT ?",
                (reader, limit),
            )
            rows = cursor.fetchall()
        return [(ChapterRef(*row[:3]), _position(row[3:])) for row in rows]

    def record_document(self, reader: str, document: str, position: DocumentPosition) -> bool:
        """Store a position in a book known only by its KOReader id, unless a newer one is stored."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "INSERT INTO document_progress(reader, document, progress, percentage, updated, "
                "device_id, device) VALUES(?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(reader, document) DO UPDATE SET progress = excluded.progress, "
                "percentage = excluded.percentage, updated = excluded.updated, "
                "device_id = excluded.device_id, device = excluded.device "
                "WHERE excluded.updated >= document_progress.updated",
                (
                    reader,
                    document,
                    position.progress,
                    position.percentage,
                    position.updated,
                    position.device_id,
                    position.device,
                ),
            )
            return cursor.rowcount > 0

    def document(self, reader: str, document: str) -> DocumentPosition | None:
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT progress, percentage, updated, device_id, device FROM document_progress "
                "WHERE reader = ? AND document = ?",
                (reader, document),
            )
            row = cursor.fetchone()
        return None if row is None else DocumentPosition(*row)

    # -- from async code -------------------------------------------------------------

    async def arecord(
        self, reader: str, ref: ChapterRef, position: Position, *, inferred: bool = False
    ) -> bool:
        return await asyncio.to_thread(
            functools.partial(self.record, reader, ref, position, inferred=inferred)
        )

    async def apositions(self, reader: str, source: str, manga: str) -> dict[str, Position]:
        return await asyncio.to_thread(self.positions, reader, source, manga)

    async def aforget(self, reader: str, ref: ChapterRef) -> bool:
        return await asyncio.to_thread(self.forget, reader, ref)

    async def arecent(self, reader: str, limit: int) -> list[tuple[ChapterRef, Position]]:
        return await asyncio.to_thread(self.recent, reader, limit)

    async def aposition(self, reader: str, ref: ChapterRef) -> Position | None:
        return await asyncio.to_thread(self.position, reader, ref)

    async def arecord_document(
        self, reader: str, document: str, position: DocumentPosition
    ) -> bool:
        return await asyncio.to_thread(self.record_document, reader, document, position)

    async def adocument(self, reader: str, document: str) -> DocumentPosition | None:
        return await asyncio.to_thread(self.document, reader, document)
