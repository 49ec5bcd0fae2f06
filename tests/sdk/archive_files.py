"""Chapter files made for the archive tests (7z, hand-built RAR 4, hostile PDFs), and a count
of how often an archive's directory is parsed."""

import io
import zlib
from pathlib import Path
from typing import Any

import py7zr
import pytest
from PIL import Image

FIXTURES = Path(__file__).parent / "fixtures"


def jpeg(colour: tuple[int, int, int] = (200, 0, 0), size: tuple[int, int] = (8, 8)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, "JPEG")
    return buffer.getvalue()


def seven_zip(path: Path, entries: dict[str, bytes]) -> Path:
    """A 7z archive; py7zr writes one solid block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with py7zr.SevenZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(data, name)
    return path


def pages(count: int) -> dict[str, bytes]:
    return {f"{n}.jpg": jpeg((n % 250, 0, 0)) for n in range(1, count + 1)}


def _zeros(count: int) -> bytes:
    packer = zlib.compressobj(9)
    block = b"\x00" * (1 << 20)
    parts = []
    while count:
        piece = block[: min(len(block), count)]
        parts.append(packer.compress(piece))
        count -= len(piece)
    parts.append(packer.flush())
    return b"".join(parts)


def image_pdf(path: Path, width: int, height: int, *, mask: int = 0) -> Path:
    """A one-page PDF (600 x 800 points) drawing one black gray image of width x height
    pixels: a few hundred kilobytes of compressed zeros at 20,000 x 20,000. With ``mask``,
    the image has a soft mask of mask x mask pixels, which PDFium decodes whole."""
    data = _zeros(width * height)
    content = b"q 600 0 0 800 0 0 cm /Im Do Q"
    soft = b"/SMask 6 0 R " if mask else b""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 600 800] "
        b"/Resources << /XObject << /Im 4 0 R >> >> /Contents 5 0 R >>",
        _image(width, height, data, soft),
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
    ]
    if mask:
        objects.append(_image(mask, mask, _zeros(mask * mask), b""))
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(out))
    return path


def _image(width: int, height: int, data: bytes, extra: bytes) -> bytes:
    return (
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
        b"/BitsPerComponent 8 /Filter /FlateDecode %s/Length %d >>\nstream\n"
        % (width, height, extra, len(data))
        + data
        + b"\nendstream"
    )


def count_opens(monkeypatch: pytest.MonkeyPatch, cls: Any) -> list[str]:
    """Every directory parse of ``cls`` (py7zr and rarfile parse in their constructor)."""
    opened: list[str] = []
    real_init = cls.__init__

    def counting(self: Any, file: Any, *args: Any, **kwargs: Any) -> None:
        opened.append(str(file))
        real_init(self, file, *args, **kwargs)

    monkeypatch.setattr(cls, "__init__", counting)
    return opened
