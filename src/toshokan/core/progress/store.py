"""Where each reader is in each chapter, and in books known only by a KOReader document id.

Every face that shows or records progress goes through :class:`ProgressStore`,
so the web reader, OPDS, the Komga API and KOReader all move one position.
A write carries its time (the client's, where the protocol has one) and an
older write never overwrites a newer one: the upserts only update ``WHERE``
the stored time is not newer, and say whether they did.

The methods are blocking (a database call); async code awaits the ``a``-prefixed
twins, which run them in a worker thread so the event loop never waits on disk.
"""

import asyncio
from dataclasses import dataclass

from toshokan.core.progress.database import Database

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
    """How far a reader got in a chapter: page ``page`` (from 1) of ``pages``, and when, where."""

    page: int
    pages: int
    finished: bool
    updated: float
    device_id: str = ""
    device: str = ""


@dataclass(frozen=True)
class DocumentPosition:
    """A KOReader position in a book the host does not hold, kept as KOReader's server keeps it."""

    progress: str
    percentage: float
    updated: float
    device_id: str = ""
    device: str = ""


class ProgressStore:
    def __init__(self, database: Database):
        self.database = database

    def record(self, reader: str, ref: ChapterRef, position: Position) -> bool:
        """Store ``position`` unless a newer one is stored; whether it was stored."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "INSERT INTO progress(reader, source, manga, chapter, page, pages, finished, "
                "updated, device_id, device) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(reader, source, manga, chapter) DO UPDATE SET page = excluded.page, "
                "pages = excluded.pages, finished = excluded.finished, updated = excluded.updated, "
                "device_id = excluded.device_id, device = excluded.device "
                "WHERE excluded.updated >= progress.updated",
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
                ),
            )
            return cursor.rowcount > 0

    def position(self, reader: str, ref: ChapterRef) -> Position | None:
        with self.database.transaction() as cursor:
            cursor.execute(
                "SELECT page, pages, finished, updated, device_id, device FROM progress "
                "WHERE reader = ? AND source = ? AND manga = ? AND chapter = ?",
                (reader, ref.source, ref.manga, ref.chapter),
            )
            row = cursor.fetchone()
        if row is None:
            return None
        page, pages, finished, updated, device_id, device = row
        return Position(page, pages, bool(finished), updated, device_id, device)

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

    async def arecord(self, reader: str, ref: ChapterRef, position: Position) -> bool:
        return await asyncio.to_thread(self.record, reader, ref, position)

    async def aposition(self, reader: str, ref: ChapterRef) -> Position | None:
        return await asyncio.to_thread(self.position, reader, ref)

    async def arecord_document(
        self, reader: str, document: str, position: DocumentPosition
    ) -> bool:
        return await asyncio.to_thread(self.record_document, reader, document, position)

    async def adocument(self, reader: str, document: str) -> DocumentPosition | None:
        return await asyncio.to_thread(self.document, reader, document)
