"""Kept copies: chapters of upstream series written into the local library, tied to their
originals (DECISIONS.md, "Follows, updates and kept copies"; docs/keeping.md).

:class:`Keeper` keeps one chapter (what the download queue runs for each); :class:`Shelf`
writes CBZ files whole or not at all; :class:`Ties` holds what ties a kept chapter to its
original, for the progress store; :mod:`.errors` says why a chapter could not be kept.
"""

from toshokan.core.keeping.errors import (
    BadImage,
    KeepError,
    KeepUnavailable,
    NoSpace,
    NotWritable,
    TooLarge,
)
from toshokan.core.keeping.keeper import Keeper, Kept
from toshokan.core.keeping.shelf import Bounds, Draft, Shelf, Staged
from toshokan.core.keeping.ties import Tie, Ties

__all__ = [
    "BadImage",
    "Bounds",
    "Draft",
    "KeepError",
    "KeepUnavailable",
    "Keeper",
    "Kept",
    "NoSpace",
    "NotWritable",
    "Shelf",
    "Staged",
    "Tie",
    "Ties",
    "TooLarge",
]
