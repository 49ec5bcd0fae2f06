"""Which reader a chapter file needs: told by its extension, or by its first bytes when the
extension is wrong (a zip named ``.cbr`` is common)."""

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


#: The first bytes of each archive format, as the formats define them.
ARCHIVE_MAGIC = (
    (b"PK\x03\x04", "zip"),
    (b"PK\x05\x06", "zip"),  # an empty zip
    (b"Rar!\x1a\x07", "rar"),  # RAR 4 and 5
    (b"7z\xbc\xaf\x27\x1c", "7z"),
)


def archive_kind_of_content(path: Path | str) -> str | None:
    """``zip``, ``rar`` or ``7z`` as the file's first bytes say; None for anything else."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(8)
    except OSError:
        return None
    for magic, kind in ARCHIVE_MAGIC:
        if head.startswith(magic):
            return kind
    return None
