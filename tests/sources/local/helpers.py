"""Builders for hand-made library edge cases."""

import io
import struct
import zipfile
import zlib
from pathlib import Path

from PIL import Image


def jpeg(
    text: str = "", size: tuple[int, int] = (8, 8), colour: tuple[int, int, int] = (200, 0, 0)
) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, "JPEG")
    return buffer.getvalue()


def png(size: tuple[int, int] = (4, 4)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (0, 0, 200)).save(buffer, "PNG")
    return buffer.getvalue()


def comicinfo(**fields: str) -> bytes:
    body = "".join(f"<{k}>{v}</{k}>" for k, v in fields.items())
    return f'<?xml version="1.0"?><ComicInfo>{body}</ComicInfo>'.encode()


def cbz(
    path: Path,
    pages: dict[str, bytes] | int = 2,
    info: bytes | None = None,
    extra: dict[str, bytes] | None = None,
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(pages, int):
        pages = {f"{n}.jpg": jpeg(str(n)) for n in range(1, pages + 1)}
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in pages.items():
            archive.writestr(name, data)
        if info is not None:
            archive.writestr("ComicInfo.xml", info)
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return path


def _dos_time() -> int:
    return ((2024 - 1980) << 25) | (1 << 21) | (1 << 16)


def rar4(files: dict[str, bytes], *, compressed: bool = False) -> bytes:
    """A RAR 4 archive built by hand. Stored entries are readable by rarfile alone;
    ``compressed`` marks them as compressed, which needs an external tool."""
    out = bytearray(b"Rar!\x1a\x07\x00")
    body = struct.pack("<BHH", 0x73, 0, 13) + b"\x00" * 6
    out += struct.pack("<H", zlib.crc32(body) & 0xFFFF) + body
    for name, data in files.items():
        encoded = name.encode()
        fields = struct.pack(
            "<IIBIIBBHI",
            len(data),
            len(data),
            3,
            zlib.crc32(data) & 0xFFFFFFFF,
            _dos_time(),
            29,
            0x33 if compressed else 0x30,
            len(encoded),
            0x20,
        )
        size = 7 + len(fields) + len(encoded)
        header = struct.pack("<BHH", 0x74, 0x8000, size) + fields + encoded
        out += struct.pack("<H", zlib.crc32(header) & 0xFFFF) + header + data
    out += b"\xc4\x3d\x7b\x00\x40\x07\x00"
    return bytes(out)


def pdf(path: Path, pages: list[tuple[int, int, tuple[int, int, int]]]) -> Path:
    """A PDF whose pages (width and height in points) are each filled by one colour."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument.new()
    for width, height, colour in pages:
        page = document.new_page(width, height)
        image = pdfium.PdfImage.new(document)
        image.set_bitmap(pdfium.PdfBitmap.from_pil(Image.new("RGB", (8, 8), colour)))
        image.set_matrix(pdfium.PdfMatrix().scale(width, height))
        page.insert_obj(image)
        page.gen_content()
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    document.save(buffer)
    document.close()
    path.write_bytes(buffer.getvalue())
    return path


def epub(path: Path, pages: list[tuple[str, bytes]], *, svg: bool = False) -> Path:
    """A fixed-layout EPUB: one XHTML document per page image, in spine order.

    The spine order is deliberately not the order of the image names, and the
    package document lives in a sub-folder, as converters write them."""
    manifest, spine = [], []
    files: dict[str, bytes] = {}
    for n, (name, data) in enumerate(pages, 1):
        files[f"OEBPS/images/{name}"] = data
        if svg:
            body = (
                '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
                f'<image width="100" height="100" xlink:href="../images/{name}"/></svg>'
            )
        else:
            body = f'<div><img src="../images/{name}" alt="page {n}"/></div>'
        files[f"OEBPS/text/page{n}.xhtml"] = (
            '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
            f"<head><title>{n}</title></head><body>{body}</body></html>"
        ).encode()
        manifest.append(
            f'<item id="p{n}" href="text/page{n}.xhtml" media-type="application/xhtml+xml"/>'
        )
        manifest.append(f'<item id="i{n}" href="images/{name}" media-type="image/jpeg"/>')
        spine.append(f'<itemref idref="p{n}"/>')
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        f"<manifest>{''.join(manifest)}</manifest><spine>{''.join(spine)}</spine></package>"
    )
    container = (
        '<?xml version="1.0"?><container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip")
        archive.writestr("META-INF/container.xml", container)
        archive.writestr("OEBPS/content.opf", opf)
        for name, data in files.items():
            archive.writestr(name, data)
    return path


#: How a camera stores an upright picture under each EXIF orientation (tag 0x0112): the
#: inverse of what a viewer does to show it. 6 is stored turned a quarter anticlockwise
#: and shown turned clockwise; 8 the other way; 5 and 7 mirror across a diagonal.
STORED_FOR: dict[int, Image.Transpose | None] = {
    1: None,
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_90,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_270,
}
PAPER = (240, 240, 240)
#: A portrait page, so a picture shown sideways cannot pass for an upright one.
PAGE_SIZE = (60, 90)


def marked(
    marker: tuple[int, int, int] = (220, 20, 20), size: tuple[int, int] = PAGE_SIZE
) -> Image.Image:
    """An upright page: paper, with ``marker`` filling its top-left third."""
    image = Image.new("RGB", size, PAPER)
    image.paste(marker, (0, 0, size[0] // 3, size[1] // 3))
    return image


def encoded(image: Image.Image, kind: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, kind, **options)
    return buffer.getvalue()


def oriented_jpeg(orientation: int, marker: tuple[int, int, int] = (220, 20, 20)) -> bytes:
    """A JPEG stored as a camera or scanner stores it, shown as :func:`marked` when its
    EXIF orientation is applied."""
    method = STORED_FOR[orientation]
    stored = marked(marker) if method is None else marked(marker).transpose(method)
    exif = Image.Exif()
    exif[0x0112] = orientation
    return encoded(stored, "JPEG", exif=exif.tobytes(), quality=95)


def near(colour: object, expected: tuple[int, int, int], slack: int = 40) -> bool:
    assert isinstance(colour, tuple)
    return all(abs(int(c) - e) <= slack for c, e in zip(colour[:3], expected, strict=True))


def assert_shows_marked(
    image: Image.Image, marker: tuple[int, int, int] = (220, 20, 20), width: int = PAGE_SIZE[0]
) -> None:
    """The decoded pixels are :func:`marked`'s (at ``width``): portrait, marker top left only."""
    columns, rows = image.size
    assert (columns, rows) == (width, width * PAGE_SIZE[1] // PAGE_SIZE[0]), image.size
    rgb = image.convert("RGB")
    assert near(rgb.getpixel((columns // 6, rows // 6)), marker), "marker not at the top left"
    for x, y in ((5, 5), (1, 5), (5, 1)):
        corner = rgb.getpixel((columns * x // 6, rows * y // 6))
        assert near(corner, PAPER), f"paper expected at ({x}/6, {y}/6), found {corner}"
