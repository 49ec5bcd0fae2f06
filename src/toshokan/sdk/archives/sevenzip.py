"""7z chapters (``.cb7``), read with py7zr.

7z cannot stream an entry, so a page is decompressed into memory, at most
:data:`~toshokan.sdk.archives.limits.MAX_BUFFERED_BYTES`. A solid block is
decompressed from its start, so the work to reach an entry is counted first
and refused past :data:`~toshokan.sdk.archives.limits.MAX_DECOMPRESS_WORK`.
"""

import functools
from pathlib import Path

import py7zr
import py7zr.io
import py7zr.py7zr

from toshokan.sdk.archives import limits
from toshokan.sdk.archives.base import ArchiveError, ChapterReader, TooLarge, open_archive, work_to

#: Bytes py7zr decompresses at a time. Its own choice is up to 128 MB, taken whole even for
#: the entries it skips, so the solid prefix before a page sat in memory at once: four
#: workers on a page behind 48 MB of a block peaked at 700 MB.
DECOMPRESS_CHUNK = 1024 * 1024
py7zr.py7zr.get_memory_limit = lambda: DECOMPRESS_CHUNK  # type: ignore[attr-defined]


class SevenZipReader(ChapterReader):
    def __init__(self, path: Path):
        super().__init__(path)
        # py7zr raises many unrelated types for damaged files.
        self._archive = open_archive("7z", lambda: py7zr.SevenZipFile(path, mode="r"), (Exception,))

    def release(self) -> None:
        self._archive.close()

    @property
    def entries(self) -> int:
        """Directory entries held in memory while the archive is open."""
        return len(self._archive.files)

    def members(self) -> list[tuple[str, int, bool]]:
        out = []
        for info in self._archive.files:
            if info.is_directory:
                continue
            out.append((info.filename, int(info.uncompressed or 0), bool(info.is_symlink)))
        return out

    def work(self, name: str) -> int:
        """Bytes decompressed to reach ``name``: it and every entry before it in its block."""
        return work_to(self._work, name)

    @functools.cached_property
    def _work(self) -> dict[str, int]:
        """Every entry's work, from the directory, worked out at the first read that needs it."""
        work: dict[str, int] = {}
        spent: dict[int, int] = {}
        for info in self._archive.files:  # stream order: a block is decompressed from its start
            if info.folder is None:  # empty: nothing to decompress
                work.setdefault(info.filename, 0)
                continue
            block = id(info.folder)
            spent[block] = spent.get(block, 0) + int(info.uncompressed or 0)
            work.setdefault(info.filename, spent[block])
        return work

    def read(self, name: str, limit: int) -> bytes:
        work = self.work(name)
        if work > limits.MAX_DECOMPRESS_WORK:
            raise TooLarge(
                f"entry needs {work} bytes decompressed (solid block); the limit is "
                f"{limits.MAX_DECOMPRESS_WORK}"
            )
        factory = py7zr.io.BytesIOFactory(limit + 1)
        try:
            self._archive.extract(targets=[name], factory=factory)
            data = factory.get(name).read()  # type: ignore[no-untyped-call]
        except Exception as error:
            raise ArchiveError(f"entry cannot be read ({type(error).__name__}: {error})") from None
        finally:
            # Ready for the next read, and the decompressor (with its dictionary, megabytes)
            # dropped while the reader waits idle.
            self._archive.reset()
        if len(data) > limit:
            raise TooLarge(f"entry is larger than {limit} bytes")
        return bytes(data)
