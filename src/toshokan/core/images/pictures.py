"""Pictures: decoding, converting to a format every reader shows, and resizing.

JPEG, PNG and GIF (the formats OPDS-PSE allows) that need no change are
served as they are, other formats (WebP, AVIF, BMP...) become JPEG; where
the answer must be the JPEG a stream link declares, PNG and GIF become JPEG
too. PSE readers ignore EXIF, so an image whose orientation tag turns or
mirrors it is re-encoded upright. A width resizes keeping the aspect ratio
(never enlarging). Images with more pixels than
:data:`MAX_PIXELS` are refused before they are decoded, so a decompression bomb
costs nothing.
"""

import io
import math
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from PIL import ExifTags, Image, ImageOps, UnidentifiedImageError

from toshokan.errors import UpstreamError
from toshokan.sdk.pictures import Picture, bounded_image, narrowed

#: More pixels than this (a 1,000 x 60,000 webtoon strip) is refused before decoding.
MAX_PIXELS = 60_000_000
#: Thumbnails (covers in a feed) are at most this wide.
THUMBNAIL_WIDTH = 300
#: A requested width is clamped into this range.
MIN_WIDTH, MAX_WIDTH = 16, 8192
JPEG_QUALITY = 85
#: The formats OPDS-PSE allows, served as they are when nothing needs changing.
ALLOWED = {"JPEG": "image/jpeg", "PNG": "image/png", "GIF": "image/gif"}
#: EXIF orientations that show the stored pixels turned a quarter (5 to 8): width and height swap.
QUARTER_TURNS = frozenset({5, 6, 7, 8})
#: Query parameters of the host's own signed links: they change every minute, the image does not.
SIGNATURE_PARAMS = frozenset({"exp", "sig"})


def _too_many_pixels(columns: int, rows: int) -> UpstreamError:
    return UpstreamError(
        f"The image is {columns} x {rows} pixels; the host decodes at most "
        f"{MAX_PIXELS // 1_000_000} million."
    )


def transform(data: bytes, width: int | None, *, as_jpeg: bool = False) -> tuple[Picture, bool]:
    """A picture every PSE reader shows upright, at most ``width`` wide (JPEG when ``as_jpeg``);
    and whether it was re-encoded.

    Runs in a worker thread: decoding and resizing are CPU work.
    """
    try:
        with bounded_image(data, MAX_PIXELS, _too_many_pixels) as image:
            columns, rows = image.size
            orientation = image.getexif().get(ExifTags.Base.Orientation, 1)
            shown_columns = rows if orientation in QUARTER_TURNS else columns
            too_wide = width is not None and shown_columns > width
            kept = ALLOWED.get(image.format or "")
            if as_jpeg and image.format != "JPEG":
                kept = None
            if kept and orientation not in range(2, 9) and not too_wide:
                return Picture(data, kept), False
            if width is not None and too_wide and image.format == "JPEG":
                scale = width / shown_columns
                image.draft("RGB", (math.ceil(columns * scale), math.ceil(rows * scale)))
            image.load()
            picture = _to_rgb(ImageOps.exif_transpose(image))
            if width is not None:
                picture = narrowed(picture, width)
            out = io.BytesIO()
            picture.save(out, "JPEG", quality=JPEG_QUALITY)
            return Picture(out.getvalue(), "image/jpeg"), True
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError, ValueError):
        raise UpstreamError("The image could not be read.") from None


def as_png(picture: Picture) -> Picture:
    """``picture`` as PNG, for clients that ask pages converted (Komga's ``?convert=png``).

    Runs in a worker thread; the pixel bound holds as for every decode.
    """
    try:
        with bounded_image(picture.data, MAX_PIXELS, _too_many_pixels) as image:
            out = io.BytesIO()
            image.save(out, "PNG")
            return Picture(out.getvalue(), "image/png")
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError, ValueError):
        raise UpstreamError("The image could not be read.") from None


def _to_rgb(image: Image.Image) -> Image.Image:
    """RGB for JPEG; transparency composited onto white, as a page's paper is."""
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        paper = Image.new("RGB", rgba.size, (255, 255, 255))
        paper.paste(rgba, mask=rgba.getchannel("A"))
        return paper
    return image.convert("RGB")


def stable_key(url: str) -> str:
    """The URL without the host's per-minute signature, so a re-signed link hits the cache."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    kept = urlencode([(k, v) for k, v in query if k not in SIGNATURE_PARAMS])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, kept, ""))


def clamp_width(value: str | int | None) -> int | None:
    """A reader's ``maxWidth``: digits within bounds, anything else means full size."""
    if value is None:
        return None
    text = str(value).strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 6:
        return None
    return max(MIN_WIDTH, min(MAX_WIDTH, int(text)))
