"""PDF chapters: pages rendered to JPEG by PDFium when first asked for.

A PDF is a program as much as a document: a page a few bytes long can hold
an image of 20,000 x 20,000 pixels (a few hundred kilobytes of compressed
zeros) that PDFium decodes whole before scaling it down, gigabytes of memory
for one page. Before a page is rendered, the pixels of the images it draws
are therefore added up (through nested forms too) and a page past
:data:`MAX_PDF_IMAGE_PIXELS` is refused; annotations, which could carry the
same images in their appearance streams, are not drawn (a comic has none
worth showing). The rendered bitmap itself is bounded by
:data:`PDF_LONG_SIDE`, so memory per render is bounded whatever the file holds.
"""

import io
import threading
from pathlib import Path

import pypdfium2 as pdfium

from toshokan.sdk.archives import limits
from toshokan.sdk.archives.base import ArchiveError, ChapterReader, Listing
from toshokan.sdk.archives.diskcache import DiskCache

#: Pages of a PDF beyond this are not listed (a chapter, not a phone book).
MAX_PDF_PAGES = 2000
#: A rendered PDF page is at most this many pixels on its longer side...
PDF_LONG_SIDE = 2000
#: ...and never drawn larger than this many times its size in points (a stamp-sized page).
PDF_MAX_SCALE = 4.0
PDF_JPEG_QUALITY = 88
#: Changes whenever rendering changes, so pages rendered the old way are not served.
PDF_RENDER_VERSION = 2

#: Image pixels one page may draw in all. PDFium decodes an image whole at up to 4 bytes a
#: pixel, so this bounds a render's memory (about 200 MB); a 600 dpi scan of a double page
#: is about 35 million pixels.
MAX_PDF_IMAGE_PIXELS = 50_000_000
#: Page objects (paths, text, images, forms) looked at to add those pixels up; a page with
#: more is refused too, since forms drawn inside forms can multiply without end.
MAX_PDF_PAGE_OBJECTS = 100_000
#: How deep forms drawn inside forms are followed: as deep as PDFium draws them.
_FORM_DEPTH = 64

#: PDFium is not thread-safe: every call into it holds this lock.
_PDFIUM = threading.Lock()


def _check_images(page: pdfium.PdfPage) -> None:
    """Refuse a page whose images would take more than the pixel budget to decode."""
    pixels = 0
    for seen, item in enumerate(page.get_objects(max_depth=_FORM_DEPTH), 1):
        if seen > MAX_PDF_PAGE_OBJECTS:
            raise ArchiveError(f"page has more than {MAX_PDF_PAGE_OBJECTS} objects")
        if not isinstance(item, pdfium.PdfImage):
            continue
        width, height = item.get_px_size()
        pixels += max(width, 0) * max(height, 0)
        if pixels > MAX_PDF_IMAGE_PIXELS:
            raise ArchiveError(
                f"page images have more than {MAX_PDF_IMAGE_PIXELS} pixels "
                f"(one is {width} x {height})"
            )


class PdfReader(ChapterReader):
    """A PDF whose pages become JPEG images, rendered by PDFium when first asked for.

    Pages are named ``00001.jpg`` and so on; a render is bounded in pixels
    (:data:`PDF_LONG_SIDE`, :data:`PDF_MAX_SCALE`) and kept in ``renders`` when
    given, keyed by the file's size and modification time.
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
            raise ArchiveError(f"entry is larger than {limit} bytes")
        return data

    def _render(self, number: int) -> bytes:
        try:
            with _PDFIUM:
                document = self._document()
                if number > self._count:
                    raise ArchiveError("no such entry")
                page = document[number - 1]
                try:
                    width, height = page.get_size()
                    if not (width > 0 and height > 0):
                        raise ArchiveError("page has no size")
                    _check_images(page)
                    scale = min(PDF_MAX_SCALE, PDF_LONG_SIDE / max(width, height))
                    bitmap = page.render(scale=scale, draw_annots=False)
                    image = bitmap.to_pil().convert("RGB")  # a copy: the bitmap can go
                    bitmap.close()
                finally:
                    page.close()
        except pdfium.PdfiumError as error:
            raise ArchiveError(f"page cannot be rendered ({error})") from None
        out = io.BytesIO()
        image.save(out, "JPEG", quality=PDF_JPEG_QUALITY)
        return out.getvalue()
