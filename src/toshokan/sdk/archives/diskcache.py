"""A size-capped cache of bytes in files, for work worth doing once."""

import hashlib
import logging
import os
import threading
from pathlib import Path

log = logging.getLogger(__name__)


class DiskCache:
    """Bytes kept in files under ``root``, least recently used removed past ``max_bytes``.

    For work worth doing once (a rendered PDF page, a thumbnail) and too large to
    hold in memory. Keys are hashed, so any text names an entry.
    """

    def __init__(self, root: Path, max_bytes: int, *, suffix: str = ""):
        self.root, self.max_bytes, self.suffix = root, max_bytes, suffix
        self._size: int | None = None
        self._lock = threading.Lock()

    def _path(self, key: str) -> Path:
        digest = hashlib.sha256(key.encode()).hexdigest()[:40]
        return self.root / digest[:2] / f"{digest}{self.suffix}"

    def get(self, key: str) -> bytes | None:
        path = self._path(key)
        try:
            data = path.read_bytes()
            os.utime(path)  # recently used: kept longest
        except OSError:
            return None
        return data

    def put(self, key: str, data: bytes) -> None:
        if len(data) > self.max_bytes:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f"{path.name}.{threading.get_ident()}.part")
            partial.write_bytes(data)
            partial.replace(path)
        except OSError as error:
            log.warning("disk cache %s: write failed (%s)", self.root, type(error).__name__)
            return
        with self._lock:
            if self._size is None:
                self._size = sum(size for _, size, _ in self._files())
            else:
                self._size += len(data)
            if self._size > self.max_bytes:
                self._trim()

    def _files(self) -> list[tuple[float, int, Path]]:
        found = []
        for path in self.root.glob(f"*/*{self.suffix}"):
            try:
                stat = path.stat()
            except OSError:
                continue
            found.append((stat.st_mtime, stat.st_size, path))
        return found

    def _trim(self) -> None:
        """Down to 90% of the cap, oldest use first, so every put does not trim again."""
        files = sorted(self._files())
        total = sum(size for _, size, _ in files)
        for _, size, path in files:
            if total <= self.max_bytes * 0.9:
                break
            path.unlink(missing_ok=True)
            total -= size
        self._size = total
