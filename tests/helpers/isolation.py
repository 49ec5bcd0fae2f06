"""The suite never touches what the person running it has: their data under ``HOME``, or the host
they may be running on port 8000.

For the whole session ``HOME`` and the XDG directories point into a home of the suite's own,
so a default data directory (``~/.local/share/toshokan``) is never the user's. That home holds
a stand-in for the user's host: a data directory with a library and an index in it. Port 8000
is held by a stand-in host (a listening socket) when nothing else holds it, so a test serving
there fails as it would beside the user's host. After every test the stand-in data must be as
it was, byte for byte and file for file, and nothing may have connected to port 8000: a test
that did either fails, naming what it touched.

``TOSHOKAN_GUARDED_PORT`` moves the stand-in host to another port (the guard's own test runs a
session inside the suite, whose port 8000 is already held).
"""

import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

#: The port the README's `serve` listens on, where a user's host runs.
GUARDED_PORT = int(os.environ.get("TOSHOKAN_GUARDED_PORT", "8000"))
#: The user's home, as it was before the session moved it.
USER_HOME = Path.home()
#: The stand-in for the user's host's data: a library and an index, under the default place.
STAND_IN = {
    "library/Iron Garden/Ch 1.cbz": b"PK\x05\x06" + b"\x00" * 18,
    "library/Iron Garden/Ch 2.cbz": b"PK\x05\x06" + b"\x00" * 18,
    "local/index.sqlite3": b"SQLite format 3\x00 the user's index",
    "readers.sqlite3": b"SQLite format 3\x00 the user's readers",
}

Snapshot = dict[str, tuple[int, int, bytes]]


class StandInHost:
    """A socket holding the port; who connected is read from its queue after each test."""

    def __init__(self, port: int):
        self.sock: socket.socket | None = socket.socket()
        try:
            self.sock.bind(("127.0.0.1", port))
        except OSError:  # a host of the user's holds it: it plays the part, uncounted
            self.sock.close()
            self.sock = None
            return
        self.sock.listen(128)
        self.sock.setblocking(False)

    def connected(self) -> int:
        """Connections made since the last call (the kernel queues them as they are made)."""
        count = 0
        while self.sock is not None:
            try:
                connection, _ = self.sock.accept()
            except BlockingIOError:
                break
            connection.close()
            count += 1
        return count

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()


def snapshot(root: Path) -> Snapshot:
    """Every file and folder under ``root``: size, modification time and bytes."""
    return {
        str(path.relative_to(root)): (stat.st_size, stat.st_mtime_ns, path.read_bytes())
        if path.is_file()
        else (0, 0, b"folder")
        for path in sorted(root.rglob("*"))
        if (stat := path.stat())
    }


def plant(data: Path) -> None:
    """The stand-in's data, afresh."""
    shutil.rmtree(data, ignore_errors=True)
    for name, content in STAND_IN.items():
        (data / name).parent.mkdir(parents=True, exist_ok=True)
        (data / name).write_bytes(content)
        os.utime(data / name, ns=(PLANTED_AT, PLANTED_AT))


#: When the stand-in's files were last written, as their modification time says.
PLANTED_AT = 1_700_000_000 * 10**9


def pytest_configure(config: pytest.Config) -> None:
    home = Path(tempfile.mkdtemp(prefix="toshokan-tests-home-"))
    os.environ["HOME"] = str(home)
    os.environ["XDG_DATA_HOME"] = str(home / ".local" / "share")
    os.environ["XDG_CONFIG_HOME"] = str(home / ".config")
    os.environ["XDG_CACHE_HOME"] = str(home / ".cache")
    os.environ["XDG_STATE_HOME"] = str(home / ".local" / "state")
    data = home / ".local" / "share" / "toshokan"
    plant(data)
    config.stash[HOME] = home
    config.stash[DATA] = data
    config.stash[BEFORE] = snapshot(data)
    config.stash[HOST] = StandInHost(GUARDED_PORT)


def pytest_unconfigure(config: pytest.Config) -> None:
    if HOST in config.stash:
        config.stash[HOST].close()
    if HOME in config.stash:
        shutil.rmtree(config.stash[HOME], ignore_errors=True)


HOME = pytest.StashKey[Path]()
DATA = pytest.StashKey[Path]()
BEFORE = pytest.StashKey[Snapshot]()
HOST = pytest.StashKey[StandInHost]()


@pytest.fixture(autouse=True)
def the_users_host_is_left_alone(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fails the test that changed the stand-in's data or connected to its port."""
    config = request.config
    host = config.stash[HOST]
    host.connected()
    yield
    touched = [f"connected to port {GUARDED_PORT}"] if host.connected() else []
    data, before = config.stash[DATA], config.stash[BEFORE]
    after = snapshot(data)
    if after != before:
        changed = sorted(
            name for name in before.keys() | after.keys() if before.get(name) != after.get(name)
        )
        touched.append(f"changed the user's data under {data}: {', '.join(changed)}")
        plant(data)  # put back, so that the next test is judged on its own
    if touched:
        pytest.fail(
            "this test touched what the person running the suite has: " + "; ".join(touched),
            pytrace=False,
        )
