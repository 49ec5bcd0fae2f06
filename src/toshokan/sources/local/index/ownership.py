"""Whose index a file is: one library root, and one host's processes at a time.

Two libraries writing one index each took the other's chapters for deleted
files, so an index records the root it was built from and refuses any other;
and the default index file is named by its root, so that switching
``--library`` between runs opens each library's own index again, slugs and
all, instead of rescanning one into the other.

Two processes may share an index only as replicas of one host (``[cluster]
redis``: their scans take turns under one lease). A lone host holds its
index's lock alone, so a second ``serve`` or a ``scan`` of the same library
is refused with one line instead of interleaving with it.
"""

import fcntl
import hashlib
import os
import threading
from pathlib import Path
from typing import IO, ClassVar

from toshokan.sources.local.index.database import IndexUnavailable


def root_key(root: Path) -> str:
    """A short, stable name for a library root (its resolved path)."""
    return hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:12]


def default_index_path(data_dir: Path, slug: str, root: Path) -> Path:
    """Where a library's index lives when its settings name no ``index_path``: one file
    per source and root, DATA_DIR/local/<slug>-<root key>.sqlite3."""
    return data_dir / "local" / f"{slug}-{root_key(root)}.sqlite3"


class IndexLock:
    """An advisory lock on ``<index>.lock`` held while a process uses the index.

    ``host`` names the host the process belongs to when it runs as one of several
    replicas; None for a lone process, which must be the index's only user. Sources of
    one process share the process's hold (the rule is about processes).
    """

    #: Lock path -> (the open lock file, how many holders in this process).
    _held: ClassVar[dict[Path, tuple[IO[str], int]]] = {}
    _guard: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, index_path: Path, host: str | None):
        self.path = index_path.with_name(index_path.name + ".lock").absolute()
        self.host = host
        self._holding = False

    def acquire(self) -> None:
        """Take the lock, or raise :class:`IndexUnavailable` naming who holds it."""
        with self._guard:
            held = self._held.get(self.path)
            if held is None:
                held = (self._lock_file(), 0)
            self._held[self.path] = (held[0], held[1] + 1)
            self._holding = True

    def _lock_file(self) -> IO[str]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release
        except OSError as error:
            raise IndexUnavailable(
                f"the index lock {self.path} cannot be opened ({error.strerror}): make its "
                "folder writable by this user, or set index_path elsewhere"
            ) from None
        owner = f"host {self.host}" if self.host is not None else f"pid {os.getpid()}"
        try:
            if _try(handle, fcntl.LOCK_EX):  # nobody uses the index: it is this process's
                handle.seek(0)
                handle.truncate()
                handle.write(owner)
                handle.flush()
                if self.host is not None:  # other replicas of this host may join
                    fcntl.flock(handle, fcntl.LOCK_SH)
            elif self.host is None or not _try(handle, fcntl.LOCK_SH) or _read(handle) != owner:
                raise IndexUnavailable(
                    f"the index {self.path.with_suffix('')} is in use by another toshokan "
                    f"process ({_read(handle) or 'unknown'}, not a replica of this host); "
                    "one library index serves one host: stop that process, or give this one "
                    "its own data_dir or index_path"
                )
        except BaseException:
            handle.close()
            raise
        return handle

    def release(self) -> None:
        with self._guard:
            if not self._holding:
                return
            self._holding = False
            handle, count = self._held.pop(self.path)
            if count > 1:
                self._held[self.path] = (handle, count - 1)
            else:
                handle.close()  # closing the file lets go of the lock


def _try(handle: IO[str], mode: int) -> bool:
    try:
        fcntl.flock(handle, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _read(handle: IO[str]) -> str:
    handle.seek(0)
    return handle.read(200).strip()


def host_identity(secret: bytes) -> str:
    """What the replicas of one host share and another host does not: its signing secret,
    hashed (the secret itself never leaves the process)."""
    return hashlib.sha256(b"toshokan-index-owner\n" + secret).hexdigest()[:16]
