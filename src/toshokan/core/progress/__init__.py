"""One store of where every reader is in every chapter, for every face."""

from toshokan.core.progress.store import (
    IMPLICIT_READER,
    MAX_DEVICE,
    ChapterRef,
    DocumentPosition,
    Position,
    ProgressStore,
    device_of,
)

__all__ = [
    "IMPLICIT_READER",
    "MAX_DEVICE",
    "ChapterRef",
    "DocumentPosition",
    "Position",
    "ProgressStore",
    "device_of",
]
