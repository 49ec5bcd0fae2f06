"""One store of where every reader is in every chapter, for every face."""

from toshokan.core.progress.database import Database, default_database_path
from toshokan.core.progress.store import (
    IMPLICIT_READER,
    ChapterRef,
    DocumentPosition,
    Position,
    ProgressStore,
)

__all__ = [
    "IMPLICIT_READER",
    "ChapterRef",
    "Database",
    "DocumentPosition",
    "Position",
    "ProgressStore",
    "default_database_path",
]
