"""Readers for the containers a chapter can live in, behind one interface.

A chapter is a zip (``.cbz``), 7z (``.cb7``), RAR (``.cbr``) archive, a PDF
(pages rendered on demand), an EPUB of page images or a folder of images. The
scanner needs each one's image list and ComicInfo.xml; the page route needs
one image as a stream. Nothing is ever extracted to disk; rendered PDF pages
may be kept in a size-capped :class:`DiskCache`.

One module per idea: :mod:`.base` (the interface, hostile entry names),
:mod:`.limits` (the bounds every reader shares), a module per format
(:mod:`.zips`, :mod:`.sevenzip`, :mod:`.rar`, :mod:`.pdf` and :mod:`.pdfrender`, :mod:`.epub`,
:mod:`.folder`), :mod:`.directories` (archives kept open between requests),
:mod:`.opening` (the reader a kind needs), :mod:`.zipscan` (a zip as a scan reads it), :mod:`.zippages` (a zip's page without zipfile), :mod:`.streams` (serving an entry),
:mod:`.displayable` (BMP and TIFF pages served as PNG) and :mod:`.diskcache`. Everything callers use is importable from here.
"""

from toshokan.sdk.archives import limits
from toshokan.sdk.archives.base import (
    ArchiveError,
    ChapterReader,
    Listing,
    Member,
    TooLarge,
    safe_member_name,
)
from toshokan.sdk.archives.directories import IdleReaders, ZipDirectoryCache
from toshokan.sdk.archives.diskcache import DiskCache
from toshokan.sdk.archives.displayable import CONVERTED_TYPES, displayable, needs_conversion
from toshokan.sdk.archives.epub import (
    MAX_EPUB_DOCUMENT_BYTES,
    MAX_EPUB_PACKAGE_BYTES,
    MAX_EPUB_SPINE,
    MAX_EPUB_TEXT_BYTES,
    EpubReader,
)
from toshokan.sdk.archives.folder import FolderReader
from toshokan.sdk.archives.kinds import (
    EPUB_EXTENSIONS,
    PDF_EXTENSIONS,
    archive_kind_of_content,
    kind_of,
)
from toshokan.sdk.archives.limits import MAX_BUFFERED_BYTES, MAX_DECOMPRESS_WORK, MAX_PAGE_BYTES
from toshokan.sdk.archives.opening import IDLE_READERS, open_chapter
from toshokan.sdk.archives.pdf import MAX_PDF_PAGES, PDF_RENDER_VERSION, PdfReader
from toshokan.sdk.archives.pdfrender import (
    MAX_PDF_IMAGE_PIXELS,
    PDF_JPEG_QUALITY,
    PDF_LONG_SIDE,
    PDF_MAX_SCALE,
    RENDERER,
    Renderer,
)
from toshokan.sdk.archives.rar import RAR_TOOLS, RarReader, rar_tool
from toshokan.sdk.archives.sevenzip import SevenZipReader
from toshokan.sdk.archives.streams import iter_chunks, sniff_media_type
from toshokan.sdk.archives.zippages import ZipPages
from toshokan.sdk.archives.zips import ZipReader
from toshokan.sdk.archives.zipscan import UnusualZip, ZipScan, scan_zip

__all__ = [
    "CONVERTED_TYPES",
    "EPUB_EXTENSIONS",
    "IDLE_READERS",
    "MAX_BUFFERED_BYTES",
    "MAX_DECOMPRESS_WORK",
    "MAX_EPUB_DOCUMENT_BYTES",
    "MAX_EPUB_PACKAGE_BYTES",
    "MAX_EPUB_SPINE",
    "MAX_EPUB_TEXT_BYTES",
    "MAX_PAGE_BYTES",
    "MAX_PDF_IMAGE_PIXELS",
    "MAX_PDF_PAGES",
    "PDF_EXTENSIONS",
    "PDF_JPEG_QUALITY",
    "PDF_LONG_SIDE",
    "PDF_MAX_SCALE",
    "PDF_RENDER_VERSION",
    "RAR_TOOLS",
    "RENDERER",
    "ArchiveError",
    "ChapterReader",
    "DiskCache",
    "EpubReader",
    "FolderReader",
    "IdleReaders",
    "Listing",
    "Member",
    "PdfReader",
    "RarReader",
    "Renderer",
    "SevenZipReader",
    "TooLarge",
    "UnusualZip",
    "ZipDirectoryCache",
    "ZipPages",
    "ZipReader",
    "ZipScan",
    "archive_kind_of_content",
    "displayable",
    "iter_chunks",
    "kind_of",
    "limits",
    "needs_conversion",
    "open_chapter",
    "rar_tool",
    "safe_member_name",
    "scan_zip",
    "sniff_media_type",
]
