"""Folder chapters: a directory of images, never followed outside the library root."""

import os
from pathlib import Path
from typing import BinaryIO

from toshokan.sdk.archives.base import ArchiveError, ChapterReader, TooLarge


class FolderReader(ChapterReader):
    """A folder of images. Only regular files directly inside it, never outside ``root``."""

    def __init__(self, path: Path, root: Path):
        super().__init__(path)
        self.root = root
        if not path.is_dir():
            raise ArchiveError("chapter folder is gone or unreadable")

    def _inside(self, target: Path) -> bool:
        try:
            return target.resolve().is_relative_to(self.root)
        except (OSError, RuntimeError):
            return False

    def members(self) -> list[tuple[str, int, bool]]:
        out = []
        try:
            entries = list(os.scandir(self.path))
        except OSError as error:
            raise ArchiveError(f"chapter folder cannot be listed ({error.strerror})") from None
        for entry in entries:
            try:
                if not entry.is_file():
                    continue
                outside = entry.is_symlink() and not self._inside(Path(entry.path))
                out.append((entry.name, entry.stat().st_size, outside))
            except OSError:
                continue
        return out

    def _target(self, name: str) -> Path:
        if "/" in name or "\\" in name or name in ("", ".", ".."):
            raise ArchiveError("not a page of this folder")
        target = self.path / name
        if not self._inside(target):
            raise ArchiveError("page points outside the library")
        return target

    def size(self, name: str) -> int:
        try:
            return self._target(name).stat().st_size
        except OSError as error:
            raise ArchiveError(f"file cannot be read ({error.strerror})") from None

    def read(self, name: str, limit: int) -> bytes:
        target = self._target(name)
        try:
            with target.open("rb") as stream:
                data = stream.read(limit + 1)
        except OSError as error:
            raise ArchiveError(f"file cannot be read ({error.strerror})") from None
        if len(data) > limit:
            raise TooLarge(f"file is larger than {limit} bytes")
        return data

    def heads(self, names: list[str]) -> dict[str, bytes] | None:
        heads: dict[str, bytes] = {}
        for name in names:
            try:
                with self._target(name).open("rb") as stream:
                    heads[name] = stream.read(16)
            except (OSError, ArchiveError):
                heads[name] = b""
        return heads

    def open(self, name: str) -> BinaryIO:
        target = self._target(name)
        try:
            return target.open("rb")
        except OSError as error:
            raise ArchiveError(f"file cannot be read ({error.strerror})") from None
