"""KOReader's name for a book: the partial MD5 of its file.

KOReader (``frontend/util.lua``, ``util.partialMD5``) hashes 1024-byte samples
taken at offsets ``1024 << 2*i`` for ``i`` from -1 to 10, stopping at the first
that reads nothing. Its shift is LuaJIT's 32-bit ``bit.lshift``, which masks the
count to 5 bits, so ``i = -1`` shifts by 30 and wraps to offset 0: the samples
start at 0, 1 KiB, 4 KiB, 16 KiB... up to 1 GiB. At most twelve small reads,
so a library's scan can name every file without reading it whole.
"""

import bisect
import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

SAMPLE = 1024
OFFSETS = (0, *(SAMPLE << (2 * i) for i in range(11)))


def partial_md5(path: Path | str) -> str:
    """The id KOReader gives the file at ``path`` (its default, binary document matching)."""
    with open(path, "rb") as stream:
        return partial_md5_of(stream)


def partial_md5_of(stream: BinaryIO) -> str:
    """:func:`partial_md5` of a file already open (read from wherever it stands; moved)."""

    def samples() -> Iterable[bytes]:
        for offset in OFFSETS:
            stream.seek(offset)
            yield stream.read(SAMPLE)

    return md5_of_samples(samples())


def md5_of_samples(samples: Iterable[bytes]) -> str:
    """:func:`partial_md5` of the file whose :data:`SAMPLE` bytes at each of :data:`OFFSETS`
    these are, in order (read no further than the first empty one)."""
    digest = hashlib.md5()
    for sample in samples:
        if not sample:
            break
        digest.update(sample)
    return digest.hexdigest()


def partial_md5_of_bytes(data: bytes) -> str:
    """:func:`partial_md5` of a file whose bytes are all in hand: one digest of the samples
    joined (a sample past the end is empty, and those after it too)."""
    taken = bisect.bisect_left(OFFSETS, len(data))  # the offsets inside the file
    return hashlib.md5(
        b"".join([data[offset : offset + SAMPLE] for offset in OFFSETS[:taken]])
    ).hexdigest()
