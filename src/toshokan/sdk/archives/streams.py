"""Serving an entry once a reader has it: its image type, and its bytes in chunks."""

import io
from collections.abc import Generator
from typing import BinaryIO


def sniff_media_type(head: bytes) -> str | None:
    """The image type from the first bytes, so a mislabelled page is still served right."""
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[4:8] == b"ftyp" and head[8:12] in (b"avif", b"avis"):
        return "image/avif"
    if head[:4] in (b"II*\x00", b"MM\x00*"):
        return "image/tiff"
    if head[:2] == b"BM" and head[14:15] in (b"\x0c", b"\x28", b"\x38", b"\x40", b"\x6c", b"\x7c"):
        return "image/bmp"
    return None


def iter_chunks(
    stream: BinaryIO, start: int, length: int, chunk: int = 256 * 1024
) -> Generator[bytes, None, None]:
    """``length`` bytes of ``stream`` from ``start``, in chunks; closes the stream."""
    try:
        if start:
            try:
                stream.seek(start)
            except (OSError, io.UnsupportedOperation):
                remaining_skip = start
                while remaining_skip:
                    skipped = stream.read(min(chunk, remaining_skip))
                    if not skipped:
                        return
                    remaining_skip -= len(skipped)
        remaining = length
        while remaining > 0:
            data = stream.read(min(chunk, remaining))
            if not data:
                return
            remaining -= len(data)
            yield data
    finally:
        stream.close()
