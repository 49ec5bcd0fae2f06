"""Rendering a PDF page in a child process whose memory and time are bounded.

A PDF is a program as much as a document. A file of a few hundred kilobytes
can draw an image of 20,000 x 20,000 pixels, or a 1 x 1 image whose soft mask
is that large, and PDFium decodes masks, JPEG 2000 and JBIG2 images whole
before scaling them down: gigabytes of memory, and seconds of CPU under the
lock every render holds, for one page. Two bounds therefore apply:

- before drawing, the pixels of the images a page draws (through nested forms
  too) are added up, and a page past :data:`MAX_PDF_IMAGE_PIXELS` is refused
  with a clear reason;
- what that count cannot see (a mask's own size, a pattern, a glyph of a
  Type 3 font) is drawn in a child process whose address space is capped at
  :data:`RENDER_MEMORY` and which is killed past :data:`RENDER_SECONDS`; the page
  is then refused and the next render starts a fresh child.

Annotations are not drawn: a comic has none worth showing, and they are one
more place to hide images. The rendered bitmap itself is bounded by
:data:`PDF_LONG_SIDE`.
"""

import atexit
import io
import json
import os
import resource
import select
import subprocess
import sys
import threading
import time
from typing import Any

import pypdfium2 as pdfium

from toshokan.sdk.archives.base import ArchiveError

#: A rendered PDF page is at most this many pixels on its longer side...
PDF_LONG_SIDE = 2000
#: ...and never drawn larger than this many times its size in points (a stamp-sized page).
PDF_MAX_SCALE = 4.0
PDF_JPEG_QUALITY = 88
#: Image pixels one page may draw in all. PDFium holds a decoded image at up to 4 bytes a
#: pixel; a 600 dpi scan of a double page is about 35 million pixels.
MAX_PDF_IMAGE_PIXELS = 50_000_000
#: Page objects (paths, text, images, forms) looked at to add those pixels up; a page with
#: more is refused too, since forms drawn inside forms can multiply without end.
MAX_PDF_PAGE_OBJECTS = 100_000
#: Address space of the render process: the interpreter and PDFium take about 300 MB.
RENDER_MEMORY = 1024 * 1024 * 1024
#: Seconds one page may take to render (most take a tenth of that).
RENDER_SECONDS = 15.0
#: What the render process runs.
_CHILD = f"import sys; from {__name__} import serve; serve(int(sys.argv[1]))"
#: How deep forms drawn inside forms are followed: as deep as PDFium draws them.
_FORM_DEPTH = 64


def _check_images(page: pdfium.PdfPage, budget: int, max_objects: int) -> None:
    """Refuse a page whose images would take more than ``budget`` pixels to decode."""
    pixels = 0
    for seen, item in enumerate(page.get_objects(max_depth=_FORM_DEPTH), 1):
        if seen > max_objects:
            raise ArchiveError(f"page has more than {max_objects} objects")
        if not isinstance(item, pdfium.PdfImage):
            continue
        width, height = item.get_px_size()
        pixels += max(width, 0) * max(height, 0)
        if pixels > budget:
            raise ArchiveError(
                f"page images have more than {budget} pixels (one is {width} x {height})"
            )


def _draw(document: pdfium.PdfDocument, request: dict[str, Any]) -> bytes:
    """The requested page of ``document`` as JPEG bytes, within the request's bounds."""
    page = document[int(request["number"]) - 1]
    try:
        width, height = page.get_size()
        if not (width > 0 and height > 0):
            raise ArchiveError("page has no size")
        _check_images(page, int(request["pixels"]), int(request["objects"]))
        scale = min(float(request["max_scale"]), float(request["long_side"]) / max(width, height))
        bitmap = page.render(scale=scale, draw_annots=False)
        image = bitmap.to_pil().convert("RGB")  # a copy: the bitmap can go
        bitmap.close()
    finally:
        page.close()
    out = io.BytesIO()
    image.save(out, "JPEG", quality=int(request["quality"]))
    return out.getvalue()


def serve(memory: int) -> None:
    """The child's loop: one JSON request a line on stdin; on stdout a JSON answer line,
    then the JPEG bytes it announces."""
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    opened: tuple[str, pdfium.PdfDocument] | None = None  # the last document, kept open
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        request = json.loads(line)
        data = b""
        try:
            if opened is None or opened[0] != request["key"]:
                if opened is not None:
                    opened[1].close()
                    opened = None
                opened = (request["key"], pdfium.PdfDocument(request["path"]))
            data = _draw(opened[1], request)
            answer: dict[str, object] = {"size": len(data)}
        except ArchiveError as error:
            answer = {"error": str(error)}
        except pdfium.PdfiumError as error:
            answer = {"error": f"page cannot be rendered ({error})"}
        except MemoryError:
            # PDFium may be left half-way: answer, and let the next render start afresh.
            answer = {
                "error": f"page cannot be rendered within {memory // 2**20} MB of memory",
                "exit": True,
            }
            out.write(json.dumps(answer).encode() + b"\n")
            out.flush()
            return
        except OSError as error:
            answer = {"error": f"cannot be opened ({error.strerror})"}
        out.write(json.dumps(answer).encode() + b"\n" + data)
        out.flush()


class Renderer:
    """The render process, started on first need and again after it failed; one page at a time.

    A plain child process running :func:`serve` rather than :mod:`multiprocessing`,
    whose spawned children re-import the parent's main module."""

    def __init__(self, memory: int | None = None, seconds: float | None = None):
        self.memory, self.seconds = memory, seconds
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None

    def render(self, path: str, key: str, number: int) -> bytes:
        """Page ``number`` of the PDF at ``path`` (``key`` changes when the file does), as JPEG."""
        memory = self.memory or RENDER_MEMORY
        seconds = self.seconds or RENDER_SECONDS
        request = {
            "path": path,
            "key": key,
            "number": number,
            "long_side": PDF_LONG_SIDE,
            "max_scale": PDF_MAX_SCALE,
            "quality": PDF_JPEG_QUALITY,
            "pixels": MAX_PDF_IMAGE_PIXELS,
            "objects": MAX_PDF_PAGE_OBJECTS,
        }
        with self._lock:
            child = self._start(memory)
            deadline = time.monotonic() + seconds
            try:
                assert child.stdin is not None and child.stdout is not None
                child.stdin.write(json.dumps(request).encode() + b"\n")
                child.stdin.flush()
                reader = _Reader(child.stdout.fileno(), deadline)
                answer = json.loads(reader.line())
                data = reader.exactly(int(answer.get("size", 0)))
                if answer.get("exit"):
                    self._stop()
            except TimeoutError:
                self._stop()
                raise ArchiveError(f"page took longer than {seconds:g} s to render") from None
            except (EOFError, OSError, ValueError):
                self._stop()  # the child died: most likely out of memory
                raise ArchiveError(
                    f"page cannot be rendered within {memory // 2**20} MB of memory"
                ) from None
        if "error" in answer:
            raise ArchiveError(str(answer["error"]))
        return data

    def _start(self, memory: int) -> "subprocess.Popen[bytes]":
        if self._child is not None and self._child.poll() is None:
            return self._child
        self._stop()
        command = [sys.executable, "-c", _CHILD, str(memory)]
        self._child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        return self._child

    def _stop(self) -> None:
        if self._child is None:
            return
        child, self._child = self._child, None
        child.kill()
        child.wait(5)
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                stream.close()

    def close(self) -> None:
        with self._lock:
            self._stop()


class _Reader:
    """Bytes from the child's stdout, waiting no later than ``deadline``."""

    def __init__(self, fd: int, deadline: float):
        self.fd, self.deadline, self.buffer = fd, deadline, bytearray()

    def _more(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0 or not select.select([self.fd], [], [], left)[0]:
            raise TimeoutError
        chunk = os.read(self.fd, 1 << 20)
        if not chunk:
            raise EOFError
        self.buffer += chunk

    def line(self) -> bytes:
        while b"\n" not in self.buffer:
            if len(self.buffer) > 64 * 1024:
                raise ValueError("answer line too long")
            self._more()
        line, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        return line

    def exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self._more()
        return bytes(self.buffer[:size])


#: The process-wide renderer: PDFium renders one page at a time anyway.
RENDERER = Renderer()
# Its child is the process's own: stopped and waited for when the process exits, not left
# to find its stdin closed and be reaped by whoever inherits it.
atexit.register(RENDERER.close)
