"""Checking a page before it counts: it decodes, and its pixels and bytes are within bounds.

The bytes are kept exactly as the upstream sent them; only a copy in memory is
decoded, in full (a truncated image fails only then), one at a time in the
process, so that checking never holds more than one page's pixels. The pixel
count is checked from the header first, so a decompression bomb is refused
before it is decoded.
"""

import threading
import warnings
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from toshokan.core.keeping.errors import BadImage
from toshokan.core.keeping.metadata import PageInfo

#: What a kept page may be, as Pillow names formats, and the extension it is stored under.
FORMATS = {
    "JPEG": (".jpg", "image/jpeg"),
    "PNG": (".png", "image/png"),
    "GIF": (".gif", "image/gif"),
    "WEBP": (".webp", "image/webp"),
    "AVIF": (".avif", "image/avif"),
    "BMP": (".bmp", "image/bmp"),
    "TIFF": (".tif", "image/tiff"),
}
#: One decode at a time in the process: memory for one page's pixels.
_decoding = threading.Lock()


def check_page(path: Path, size: int, *, max_pixels: int) -> tuple[PageInfo, str]:
    """The page stored at ``path`` (``size`` bytes) checked; its facts and its extension.

    Raises :class:`BadImage` saying why it is refused. Blocking: run it in a thread.
    """
    try:
        with _decoding, warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as image:
                kind = FORMATS.get(image.format or "")
                if kind is None:
                    raise BadImage(
                        f"a page is a {image.format or 'unknown'} image, not a comic page"
                    )
                width, height = image.size
                if width * height > max_pixels:
                    raise BadImage(
                        f"a page is {width} x {height} pixels; at most "
                        f"{max_pixels // 1_000_000} million are kept"
                    )
                image.load()
    except BadImage:
        raise
    except (
        UnidentifiedImageError,
        Image.DecompressionBombError,
        Image.DecompressionBombWarning,
        OSError,
        SyntaxError,
        ValueError,
    ) as error:
        raise BadImage(f"a page is not a readable image ({type(error).__name__})") from None
    extension, media_type = kind
    return PageInfo("", size, width, height, media_type), extension
