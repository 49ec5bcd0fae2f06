"""Pages in formats readers do not all display (BMP, TIFF), converted to PNG when served.

Scanners and old tools leave BMP and TIFF pages in archives and folders.
Browsers do not all show TIFF, and comic readers' image views (and OPDS-PSE)
take only JPEG, PNG and GIF, so such a page is served as PNG: lossless, as the
original was, and upright as its EXIF orientation says, since the tag does not
survive the conversion. Pages in other formats are served as they are.
"""

import io

from PIL import Image, ImageOps, UnidentifiedImageError

from toshokan.sdk.archives.base import ArchiveError
from toshokan.sdk.archives.streams import sniff_media_type
from toshokan.sdk.pictures import bounded_image

#: Page types served converted to PNG.
CONVERTED_TYPES = frozenset({"image/bmp", "image/tiff"})
#: A page above this many pixels is not decoded (a decompression bomb costs gigabytes).
MAX_CONVERTED_PIXELS = 60_000_000


def needs_conversion(data: bytes, declared: str) -> bool:
    """Whether the page (``declared`` by its name) is BMP or TIFF, by its bytes or its name."""
    return (sniff_media_type(data[:16]) or declared) in CONVERTED_TYPES


def _too_many_pixels(columns: int, rows: int) -> ArchiveError:
    return ArchiveError(f"page is {columns} x {rows} pixels")


def displayable(data: bytes, declared: str) -> tuple[bytes, str]:
    """The page as bytes and media type every reader displays; BMP and TIFF become PNG.

    Raises :class:`ArchiveError` when a page to convert cannot be decoded or is too large.
    """
    if not needs_conversion(data, declared):
        return data, sniff_media_type(data[:16]) or declared
    try:
        with bounded_image(data, MAX_CONVERTED_PIXELS, _too_many_pixels) as image:
            image.load()
            upright = ImageOps.exif_transpose(image)
            if upright.mode not in ("1", "L", "LA", "I", "I;16", "P", "RGB", "RGBA"):
                upright = upright.convert("RGBA" if "A" in upright.getbands() else "RGB")
            out = io.BytesIO()
            upright.save(out, "PNG")
            return out.getvalue(), "image/png"
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError) as error:
        raise ArchiveError(f"page cannot be decoded ({type(error).__name__})") from None
