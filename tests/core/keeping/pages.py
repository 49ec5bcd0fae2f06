"""Pages and a chapter for the keeping tests, and a process that writes one (for the faults
that need a process of their own: a kill, a file size limit).

``python -m tests.core.keeping.pages FOLDER PAGES DELAY`` writes a chapter of PAGES pages
into the keep folder FOLDER, saying ``page N`` after each and ``kept PATH`` at the end,
waiting DELAY seconds between pages; a refusal is printed as ``refused REASON: MESSAGE``.
"""

import asyncio
import io
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from PIL import Image

from toshokan.core.keeping import Bounds, KeepError, Shelf

BOUNDS = Bounds(
    image_bytes=8 * 1024 * 1024, chapter_bytes=64 * 1024 * 1024, image_pixels=60_000_000
)


def page(n: int, kind: str = "PNG", size: tuple[int, int] = (64, 96)) -> bytes:
    """An image whose colour says its number."""
    buffer = io.BytesIO()
    Image.new("RGB", size, (n * 7 % 256, n * 13 % 256, n * 29 % 256)).save(buffer, kind)
    return buffer.getvalue()


def noisy_page(n: int, side: int = 700) -> bytes:
    """A PNG that does not compress: about ``side * side * 3`` bytes."""
    buffer = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(buffer, "PNG")
    return buffer.getvalue()


async def arriving(data: bytes, chunk: int = 4096) -> AsyncIterator[bytes]:
    """``data`` as an upstream sends it: in pieces."""
    for start in range(0, len(data), chunk):
        yield data[start : start + chunk]


async def write(
    folder: Path, pages: list[bytes], delay: float = 0.0, relative: str = "Series/Series Ch.1.cbz"
) -> Path:
    shelf = Shelf(folder, BOUNDS)
    async with shelf.draft() as draft:
        for number, data in enumerate(pages, start=1):
            await draft.add_page(arriving(data))
            print(f"page {number}", flush=True)
            await asyncio.sleep(delay)
        staged = await draft.assemble(b"<?xml version='1.0'?><ComicInfo/>")
        return await draft.publish(staged, relative)


def main(folder: str, count: str, delay: str, kind: str = "small") -> None:
    make = noisy_page if kind == "noisy" else page
    try:
        path = asyncio.run(
            write(Path(folder), [make(n) for n in range(1, int(count) + 1)], float(delay))
        )
    except KeepError as refused:
        print(f"refused {refused.reason}: {refused.message}", flush=True)
        return
    print(f"kept {path}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
