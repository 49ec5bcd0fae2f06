"""The data directory, looked at before a command uses it.

Whatever file a command touches first (the generated secret, the readers'
database, a library's index) would otherwise fail with that file's own
traceback (``PermissionError``, ``sqlite3.OperationalError: unable to open
database file`` without the file), which says neither which directory is at
fault nor what to do. A directory made by another user (``sudo toshokan serve``
once) or on a read-only disk is named here, in one line, before anything is
written. The look is read-only (``check-config`` writes nothing): it asks the
system what this user may do, for the directory and the files the host keeps
directly in it and one level down.
"""

import os
from pathlib import Path

#: Where a user moves the data directory, for messages.
ELSEWHERE = "or choose another with [host] data_dir (TOSHOKAN_HOST__DATA_DIR)"
#: SQLite keeps a database's journal beside it; each must be writable as the database is.
DATABASE_SUFFIXES = (".sqlite3", ".sqlite3-wal", ".sqlite3-shm")
SECRET_NAME = "secret"
#: The first bytes of every SQLite 3 database file.
SQLITE_HEADER = b"SQLite format 3\x00"


class DataDirError(Exception):
    """The data directory (or a file the host keeps in it) cannot be used; the message names the
    path and says what to do, in one line."""


def user() -> str:
    """Who runs the command, as ``chown`` takes it: the name, else the numeric id."""
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError, AttributeError):  # no pwd on Windows; a uid without a name
        return str(os.getuid()) if hasattr(os, "getuid") else "this user"


def writable(path: Path) -> bool:
    return os.access(path, os.W_OK | os.X_OK if path.is_dir() else os.W_OK)


def unusable(path: Path, what: str, may: str = "writable") -> str:
    return (
        f"{what} {path} is not {may} by {user()}: make it theirs "
        f"(chown -R {user()} {path}) {ELSEWHERE}"
    )


def check(data_dir: Path) -> None:
    """Raise :class:`DataDirError` naming every problem :func:`problems` finds."""
    found = problems(data_dir)
    if found:
        raise DataDirError("; ".join(found))


def problems(data_dir: Path) -> list[str]:
    """Why this user could not create ``data_dir`` or keep the host's files in it, if they
    could not: each path at fault with what to do."""
    data_dir = data_dir.expanduser()
    if not data_dir.exists():
        if data_dir.is_symlink():
            return [f"the data directory {data_dir} is a broken link; {ELSEWHERE}"]
        parent = next((p for p in data_dir.parents if p.exists()), None)
        if parent is None or not parent.is_dir():
            return [
                f"the data directory {data_dir} cannot be made: {parent} is not a folder; "
                f"{ELSEWHERE}"
            ]
        if not writable(parent):
            return [
                f"the data directory {data_dir} cannot be made: {parent} is not writable by "
                f"{user()}; create it for them (mkdir -p {data_dir} && chown {user()} "
                f"{data_dir}) {ELSEWHERE}"
            ]
        return []
    if not data_dir.is_dir():
        return [f"the data directory {data_dir} is a file, not a folder; {ELSEWHERE}"]
    if not writable(data_dir):
        return [unusable(data_dir, "the data directory")]
    found: list[str] = []
    for path in kept_files(data_dir, found):
        if path.name == SECRET_NAME and not os.access(path, os.R_OK):
            found.append(
                f"the secret file {path} is not readable by {user()}: make it theirs "
                f"(chown {user()} {path}), or set [host] secret (TOSHOKAN_HOST__SECRET)"
            )
        if path.name.endswith(DATABASE_SUFFIXES):
            # SQLite writes its journal beside the database: the folder must be writable too.
            for needed in (path.parent, path):
                if not writable(needed):
                    what = "the folder" if needed.is_dir() else "the database"
                    found.append(unusable(needed, what))
            if path.suffix == ".sqlite3" and not looks_like_sqlite(path):
                found.append(
                    f"the database {path} is not an SQLite database: move it aside (the host "
                    f"then starts a new one) {ELSEWHERE}"
                )
    return list(dict.fromkeys(found))


def looks_like_sqlite(path: Path) -> bool:
    """Whether ``path`` is empty (SQLite fills it) or starts as every SQLite database does."""
    with path.open("rb") as file:
        head = file.read(len(SQLITE_HEADER))
    return head in (b"", SQLITE_HEADER)


def kept_files(data_dir: Path, found: list[str]) -> list[Path]:
    """The files the host keeps in ``data_dir`` and one level down (a library's index under
    ``local/``; what lies deeper is the caches' own contents, which may be many). A folder
    this user cannot read is a problem added to ``found``."""
    files: list[Path] = []
    for entry in sorted(data_dir.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            if not os.access(entry, os.R_OK | os.X_OK):
                found.append(unusable(entry, "the folder", "readable"))
                continue
            files += sorted(p for p in entry.iterdir() if p.is_file())
        elif entry.is_file():
            files.append(entry)
    return files
