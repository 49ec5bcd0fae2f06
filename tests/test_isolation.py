"""The suite runs beside a user's host and leaves it alone: its home is the suite's own, port
8000 is taken while it runs, and a test touching the user's data or port fails, naming it."""

import errno
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.isolation import USER_HOME
from tests.helpers.serving import REPO, free_port
from toshokan.config import default_data_dir

INNER = """
import socket
from pathlib import Path

from toshokan.config import default_data_dir


def test_emptying_the_users_index():
    (default_data_dir() / "local" / "index.sqlite3").write_bytes(b"")


def test_a_new_file_beside_the_users_library():
    (default_data_dir() / "startup.lock").touch()


def test_asking_the_users_host():
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()


def test_a_test_of_its_own(tmp_path):
    (tmp_path / "index.sqlite3").write_bytes(b"")
"""


def test_the_suite_has_a_home_of_its_own() -> None:
    home = Path.home()
    assert home != USER_HOME and home.name.startswith("toshokan-tests-home-")
    assert default_data_dir() == home / ".local" / "share" / "toshokan"
    assert os.environ["XDG_CONFIG_HOME"].startswith(str(home))


def test_port_8000_is_taken_while_the_suite_runs() -> None:
    """As beside a user's host: a test that would serve there fails at once."""
    with socket.socket() as sock, pytest.raises(OSError) as refused:
        sock.bind(("127.0.0.1", 8000))
    assert refused.value.errno == errno.EADDRINUSE


def test_a_test_touching_the_users_data_or_port_fails_naming_it(tmp_path: Path) -> None:
    port = free_port()
    (tmp_path / "test_inner.py").write_text(INNER.replace("{port}", str(port)))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.helpers.isolation", "-p",
         "no:cacheprovider", "-rA", "-c", str(tmp_path / "pytest.ini"), str(tmp_path)],
        cwd=REPO,
        env={**os.environ, "TOSHOKAN_GUARDED_PORT": str(port)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip
    out = ran.stdout
    assert ran.returncode == 1, out
    assert "4 passed, 3 errors" in out, out
    assert any(x.startswith("PASSED") for x in out.splitlines() if "::test_a_test_of_its" in x)
    failures = out.split("ERROR at teardown of ")[1:]
    for name, touched in (
        ("test_emptying_the_users_index", "changed the user's data under "),
        ("test_a_new_file_beside_the_users_library", "startup.lock"),
        ("test_asking_the_users_host", f"connected to port {port}"),
    ):
        [report] = [part for part in failures if part.startswith(name)]
        assert touched in report, report
    assert "local/index.sqlite3" in failures[0] or "local/index.sqlite3" in out
