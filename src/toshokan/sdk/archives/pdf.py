"""PDF chapters: pages rendered to JPEG when first asked for.

The document is opened here only to count its pages; drawing a page, where a
hostile file can cost unbounded memory and time, happens in the bounded
child process of :mod:`.pdfrender`.
"""

import threading
from pathlib import Path

import pypdfium2 as pdfium

from toshokan.sdk.archives import limits, pdfrender
from toshokan.sdk.archives.base import ArchiveError, ChapterReader, Listing, TooLarge
from toshokan.sdk.archives.diskcache import DiskCache

#: Pages of a PDF beyond this are not listed (a chapter, not a phone book).
MAX_PDF_PAGES = 2000
#: Changes whenever rendering changes, so pages rendered the old way are not served.
PDF_RENDER_VERSION = 2

#: PDFium is not thread-safe: every call into it in this process holds this lock.
_PDFIUM = threading.Lock()


class PdfReader(ChapterReader):
    """A PDF whose pages become JPEG images, rendered by PDFium when first asked for.

    Pages are named ``00001.jpg`` and so on; a render is bounded in pixels, memory and
    time (:mod:`.pdfrender`) and kept in ``renders`` when given, keyed by the file's
    size and modification time.
    """

    def __init__(self, path: Path, renders: DiskCache | None = None):
        super().__init__(path)
        self.renders = renders
        self._last: tuple[str, bytes] | None = None
        #: Opened on first need: a page already rendered is served without PDFium.
        self._pdf: pdfium.PdfDocument | None = None
        self._count = 0
        try:
            stat = path.stat()
        except OSError as error:
            raise ArchiveError(f"cannot be opened ({error.strerror})") from None
        self._key = f"{path}:{stat.st_size}:{stat.st_mtime_ns}:{PDF_RENDER_VERSION}"

    def _document(self) -> pdfium.PdfDocument:
        """The open document; call with :data:`_PDFIUM` held."""
        if self._pdf is None:
            try:
                self._pdf = pdfium.PdfDocument(str(self.path))
                self._count = len(self._pdf)
            except pdfium.PdfiumError as error:
                raise ArchiveError(f"not a readable PDF ({error})") from None
            except OSError as error:
                raise ArchiveError(f"cannot be opened ({error.strerror})") from None
        return self._pdf

    @property
    def count(self) -> int:
        """Pages in the document."""
        with _PDFIUM:
            self._document()
        return self._count

    def release(self) -> None:
        if self._pdf is not None:
            with _PDFIUM:
                self._pdf.close()
            self._pdf = None

    def members(self) -> list[tuple[str, int, bool]]:
        return [(f"{n:05d}.jpg", 0, False) for n in range(1, min(self.count, MAX_PDF_PAGES) + 1)]

    def listing(self, *, comicinfo_limit: int) -> Listing:
        found = super().listing(comicinfo_limit=comicinfo_limit)
        if self.count > MAX_PDF_PAGES:
            found.warnings.append(f"only the first {MAX_PDF_PAGES} of {self.count} pages listed")
        return found

    @staticmethod
    def _number(name: str) -> int:
        stem, dot, ext = name.partition(".")
        if not (dot and ext == "jpg" and stem.isascii() and stem.isdigit() and len(stem) == 5):
            raise ArchiveError("no such entry")
        number = int(stem)
        if not 1 <= number <= MAX_PDF_PAGES:
            raise ArchiveError("no such entry")
        return number

    def size(self, name: str) -> int:
        return len(self.read(name, limits.MAX_BUFFERED_BYTES))

    def read(self, name: str, limit: int) -> bytes:
        number = self._number(name)
        if self._last is not None and self._last[0] == name:
            data = self._last[1]
        else:
            # Cached only after a render succeeded, so a hit is a page this file has.
            key = f"{self._key}:{number}"
            cached = self.renders.get(key) if self.renders is not None else None
            data = cached if cached is not None else self._render(number)
            if cached is None and self.renders is not None:
                self.renders.put(key, data)
            self._last = (name, data)
        if len(data) > limit:
            raise TooLarge(f"entry is larger than {limit} bytes")
        return data

    def _render(self, number: int) -> bytes:
        if number > self.count:
            raise ArchiveError("no such entry")
        return pdfrender.RENDERER.render(str(self.path), self._key, number)
