"""One store of where every reader is in every chapter, for every face."""

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
    "DocumentPosition",
    "Position",
    "ProgressStore",
]
