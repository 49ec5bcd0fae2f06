"""A data directory the user cannot use stops every command that needs it with one line naming
the path and what to do, never a traceback: one made by another user (``sudo toshokan serve``
once), a secret this user cannot read, a database file that is not one.

The commands run as a process of their own, as a user runs them. Run by root, whom the
system lets write anywhere, they run as ``nobody`` in a directory root owns; run by anyone
else, the directory is made read-only.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.serving import REPO, free_port
from toshokan.core.data_dir import DataDirError
from toshokan.core.database import SqliteDatabase

ROOT = os.geteuid() == 0
NOBODY = 65534
COMMANDS = {
    "serve": ("serve", "--port", "{port}"),
    "scan": ("scan", "{library}"),
    "readers": ("readers", "list"),
    "check-config": ("check-config", "{config}"),
}


@pytest.fixture
def place() -> Iterator[Path]:
    """A folder everyone may enter (pytest's own temporary folders are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="toshokan-data-dir-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        for path in (folder, *folder.rglob("*")):
            if path.is_dir():
                path.chmod(0o755)
        shutil.rmtree(folder)


def owned_by_someone_else(path: Path, mode: int) -> None:
    """``path`` as another user's: root's, for the ``nobody`` the commands run as; this user's
    without the permission (a read-only folder), when the tests do not run as root."""
    path.chmod(mode if ROOT else mode & 0o555)


def run(place: Path, data: Path, command: str) -> subprocess.CompletedProcess[str]:
    library = place / "library"
    library.mkdir(exist_ok=True)
    config = place / "toshokan.toml"
    config.write_text(f'[host]\ndata_dir = "{data}"\n[sources.local]\nroot = "{library}"\n')
    args = [
        part.format(port=free_port(), library=library, config=config) for part in COMMANDS[command]
    ]
    global_args = [] if command == "check-config" else ["--config", str(config)]
    return subprocess.run(
        [sys.executable, "-m", "toshokan", *global_args, *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(place)},
        user=NOBODY if ROOT else None,
        timeout=120,
        check=False,
    )


def assert_one_line_naming(result: subprocess.CompletedProcess[str], path: Path) -> str:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(path) in lines[0]
    return lines[0]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_data_directory_this_user_cannot_write_is_one_line_naming_it(
    place: Path, command: str
) -> None:
    data = place / "data"
    data.mkdir()
    (data / "readers.sqlite3").touch()
    owned_by_someone_else(data, 0o755)
    line = assert_one_line_naming(run(place, data, command), data)
    assert "is not writable by" in line
    assert "[host] data_dir" in line and "chown" in line  # what to do


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_data_directory_that_cannot_be_made_is_one_line_naming_it(
    place: Path, command: str
) -> None:
    parent = place / "srv"
    parent.mkdir()
    owned_by_someone_else(parent, 0o755)
    line = assert_one_line_naming(run(place, parent / "toshokan", command), parent / "toshokan")
    assert f"cannot be made: {parent} is not writable" in line


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_secret_this_user_cannot_read_is_one_line_naming_it(place: Path, command: str) -> None:
    data = place / "data"
    data.mkdir()
    if ROOT:
        os.chown(data, NOBODY, NOBODY)
    secret = data / "secret"
    secret.write_text("made by root\n")
    secret.chmod(0o600 if ROOT else 0o000)
    line = assert_one_line_naming(run(place, data, command), secret)
    assert "[host] secret" in line


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_database_file_that_is_not_sqlite_is_one_line_naming_it(
    place: Path, command: str
) -> None:
    data = place / "data"
    data.mkdir()
    database = data / "readers.sqlite3"
    database.write_text("these are my notes, not a database\n")
    if ROOT:
        for path in (data, database):
            os.chown(path, NOBODY, NOBODY)
    line = assert_one_line_naming(run(place, data, command), database)
    assert "not an SQLite database: move it aside" in line


def test_a_database_that_cannot_be_opened_names_its_file(tmp_path: Path) -> None:
    """What the look before a command cannot foresee (a folder where the file should be) is
    still one sentence naming the file, not sqlite3's 'unable to open database file'."""
    path = tmp_path / "readers.sqlite3"
    path.mkdir()
    with pytest.raises(DataDirError, match=f"the readers' database {path} cannot be opened"):
        SqliteDatabase(path)


def test_check_config_writes_nothing_into_a_data_directory_it_could_make(tmp_path: Path) -> None:
    data = tmp_path / "not" / "yet"
    config = tmp_path / "toshokan.toml"
    (tmp_path / "library").mkdir()
    config.write_text(f'[host]\ndata_dir = "{data}"\n[sources.local]\nroot = "{tmp_path}"\n')
    result = subprocess.run(
        [sys.executable, "-m", "toshokan", "check-config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "not").exists()
