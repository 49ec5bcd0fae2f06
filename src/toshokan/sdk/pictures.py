"""Decoding pictures from strangers within bounds, and narrowing them: shared by the host's
image pipeline, the local library's thumbnails and converted archive pages."""

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from PIL import Image


@dataclass(frozen=True)
class Picture:
    """Image bytes and their media type."""

    data: bytes
    media_type: str


@contextmanager
def bounded_image(
    data: bytes, max_pixels: int, too_large: Callable[[int, int], Exception]
) -> Iterator[Image.Image]:
    """The picture in ``data``, opened but not decoded; ``too_large(columns, rows)`` is raised
    past ``max_pixels``, before decoding (a decompression bomb costs gigabytes)."""
    with Image.open(io.BytesIO(data)) as image:
        columns, rows = image.size
        if columns * rows > max_pixels:
            raise too_large(columns, rows)
        yield image


def narrowed(picture: Image.Image, width: int) -> Image.Image:
    """``picture`` at most ``width`` wide, keeping its aspect ratio."""
    if picture.width <= width:
        return picture
    height = max(1, round(picture.height * width / picture.width))
    return picture.resize((width, height), Image.Resampling.LANCZOS)
