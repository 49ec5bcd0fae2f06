"""RAR chapters (``.cbr``), read with rarfile.

rarfile parses the directory itself and reads stored entries straight from
the file. Compressed entries are decompressed by an external tool (unrar,
unar, 7z or bsdtar) into a pipe, run here rather than through rarfile (whose
bsdtar command line names the archive ``--``), and so are held in memory to be
served, at most :data:`~toshokan.sdk.archives.limits.MAX_BUFFERED_BYTES`.

In a solid archive the tool decompresses every entry before the one asked
for, so that work is counted from the directory first and refused past
:data:`~toshokan.sdk.archives.limits.MAX_DECOMPRESS_WORK`; and a tool still
running after :data:`RAR_TOOL_SECONDS` is killed. A page then costs bounded
work, whatever the archive holds.
"""

import functools
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import IO, BinaryIO, cast

import rarfile

from toshokan.sdk.archives import limits
from toshokan.sdk.archives.base import (
    ArchiveError,
    ChapterReader,
    Listing,
    TooLarge,
    open_archive,
    work_to,
)

RAR_TOOLS = ("unrar", "unar", "7z", "7zz", "bsdtar")
#: Seconds a tool may take to decompress one entry (a capped solid prefix takes about one).
RAR_TOOL_SECONDS = 20.0


def _pattern(name: str) -> str:
    """An entry name as a bsdtar pattern that matches only it."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in name)


#: Each tool's command line writing one entry of an archive to stdout, with no password.
_COMMANDS = {
    "unrar": lambda archive, name: ["p", "-inul", "-p-", "--", archive, name],
    "unar": lambda archive, name: ["-q", "-o", "-", "-p", "", "--", archive, name],
    "7z": lambda archive, name: ["e", "-so", "-bb0", "-p", "--", archive, name],
    "7zz": lambda archive, name: ["e", "-so", "-bb0", "-p", "--", archive, name],
    "bsdtar": lambda archive, name: ["-x", "--to-stdout", "-f", archive, "--", _pattern(name)],
}

_NO_TOOL = (
    "no RAR tool is installed (install unrar, unar, 7z or bsdtar, e.g. Debian 'libarchive-tools')"
)


def rar_tool() -> str | None:
    """The RAR-capable system tool rarfile can use, or None."""
    for tool in RAR_TOOLS:
        if shutil.which(tool):
            return tool
    return None


class RarReader(ChapterReader):
    def __init__(self, path: Path):
        super().__init__(path)
        self._rar = open_archive(
            "RAR", lambda: rarfile.RarFile(path), (rarfile.Error, OSError, EOFError, ValueError)
        )

    def release(self) -> None:
        self._rar.close()

    @property
    def entries(self) -> int:
        """Directory entries held in memory while the archive is open."""
        return len(self._rar.infolist())

    def members(self) -> list[tuple[str, int, bool]]:
        out = []
        for info in self._rar.infolist():
            if info.is_dir():
                continue
            out.append((info.filename or "", int(info.file_size or 0), bool(info.is_symlink())))
        return out

    def needs_tool(self, names: list[str]) -> bool:
        """Whether reading these entries needs an external tool (they are compressed)."""
        return any(self._rar.getinfo(n).compress_type != rarfile.RAR_M0 for n in names)

    def work(self, name: str) -> float:
        """Bytes the tool decompresses to reach ``name``: the entry, and in a solid archive
        every entry before it too. Infinite when the directory does not say (a RAR 5 entry
        of unknown size), so that such an entry is refused rather than trusted."""
        return work_to(self._work, name)

    @functools.cached_property
    def _work(self) -> dict[str, float]:
        """Every entry's work, from the directory, worked out at the first read that needs it."""
        archive_solid = self._rar.is_solid()
        work: dict[str, float] = {}
        spent = 0.0
        for info in self._rar.infolist():  # archive order: the order the tool decompresses
            if info.is_dir():
                continue
            size: float = int(info.file_size or 0)
            if getattr(info, "file_flags", 0) & rarfile.RAR5_FILE_FLAG_UNKNOWN_SIZE:
                size = float("inf")
            solid = archive_solid or bool(info.flags & rarfile.RAR_FILE_SOLID)
            spent = spent + size if solid else size
            work.setdefault(info.filename or "", spent)
        return work

    def read(self, name: str, limit: int) -> bytes:
        try:
            info = self._rar.getinfo(name)
            if (info.file_size or 0) > limit:
                raise TooLarge(f"entry is larger than {limit} bytes")
            work = self.work(name)
            if info.compress_type != rarfile.RAR_M0 and work > limits.MAX_DECOMPRESS_WORK:
                raise TooLarge(
                    f"entry needs {work:.0f} bytes decompressed (solid archive); the limit is "
                    f"{limits.MAX_DECOMPRESS_WORK}"
                )
            if info.compress_type != rarfile.RAR_M0:
                return self._extract(name, int(info.file_size or 0), limit)
            with self._rar.open(info) as stream:
                data: bytes = stream.read(limit + 1)
        except ArchiveError:
            raise
        except (rarfile.Error, OSError, EOFError, ValueError, KeyError) as error:
            raise ArchiveError(f"entry cannot be read ({type(error).__name__}: {error})") from None
        if len(data) > limit:
            raise TooLarge(f"entry is larger than {limit} bytes")
        return data

    def _extract(self, name: str, size: int, limit: int) -> bytes:
        """A compressed entry, decompressed by the installed tool within the time bound."""
        tool = rar_tool()
        executable = shutil.which(tool) if tool else None
        if tool is None or executable is None:
            raise ArchiveError(f"entry is compressed and {_NO_TOOL}")
        command = [executable, *_COMMANDS[tool](str(self.path), name)]
        deadline = time.monotonic() + RAR_TOOL_SECONDS
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        stdout = cast(IO[bytes], process.stdout)
        data = bytearray()
        try:
            while len(data) <= limit:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([stdout], [], [], left)[0]:
                    raise ArchiveError(
                        f"entry took longer than {RAR_TOOL_SECONDS:g} s to decompress"
                    )
                chunk = os.read(stdout.fileno(), 1 << 20)
                if not chunk:
                    break
                data += chunk
        finally:
            process.kill()
            process.wait()
            stdout.close()
        if len(data) > limit:
            raise TooLarge(f"entry is larger than {limit} bytes")
        if process.returncode not in (0, -9) or len(data) != size:
            raise ArchiveError(f"entry cannot be read ({tool} gave {len(data)} of {size} bytes)")
        return bytes(data)

    def open(self, name: str) -> BinaryIO:
        try:
            info = self._rar.getinfo(name)
            if info.compress_type == rarfile.RAR_M0:
                stream: BinaryIO = self._rar.open(info)
                return stream
        except (rarfile.Error, OSError) as error:
            raise ArchiveError(f"entry cannot be read ({error})") from None
        return super().open(name)

    def listing(self, *, comicinfo_limit: int) -> Listing:
        found = super().listing(comicinfo_limit=comicinfo_limit)
        if found.pages and self.needs_tool([m.name for m in found.pages]) and rar_tool() is None:
            raise ArchiveError(f"RAR chapter has compressed pages and {_NO_TOOL}")
        return found
