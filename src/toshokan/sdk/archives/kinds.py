"""Which reader a chapter file needs, told by its extension."""

import os
from pathlib import Path

from toshokan.sdk.names import RAR_EXTENSIONS, SEVENZIP_EXTENSIONS, ZIP_EXTENSIONS

PDF_EXTENSIONS = frozenset({".pdf"})
EPUB_EXTENSIONS = frozenset({".epub"})


def kind_of(path: Path | str) -> str | None:
    """The container kind of a file by extension: ``zip``, ``7z``, ``rar``, ``pdf``,
    ``epub``, or None.

    Takes a bare name too: a scan asks this of every file, and building a Path
    for each one was a noticeable share of a rescan."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix in ZIP_EXTENSIONS:
        return "zip"
    if suffix in SEVENZIP_EXTENSIONS:
        return "7z"
    if suffix in RAR_EXTENSIONS:
        return "rar"
    if suffix in PDF_EXTENSIONS:
        return "pdf"
    if suffix in EPUB_EXTENSIONS:
        return "epub"
    return None
