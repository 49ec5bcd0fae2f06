"""A real Codex (PyPI ``codex``) on loopback, serving a library the test writes.

Codex runs headless: its config directory from ``CODEX_CONFIG_DIR``, a
``hypercorn.toml`` bound to loopback, its start-up routine creating the
``admin`` user, the library added through its admin REST API (session login,
CSRF token) and an import asked for through its librarian task API until it runs; the server
is ready when the series shows in its OPDS feed.

Codex is a large install of its own, so it lives in its own virtual
environment: ``TOSHOKAN_TEST_CODEX`` names its ``codex`` executable (default:
``.venv-codex/bin/codex`` in the repository). :func:`codex_executable` is None
when there is none, and the live test skips (in CI it fails: `.ci/run` installs Codex).
"""

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx

from tests.sources.opds.fakes import cbz
from tests.sources.opds.live import stop

REPOSITORY = Path(__file__).resolve().parents[3]
SERIES = "Red Mountain"
ISSUES = {f"{SERIES} 001 (2024).cbz": 3, f"{SERIES} 002 (2024).cbz": 2}
#: Seconds between asks to poll the library until Codex has imported it.
POLL_AGAIN = 5.0


def codex_executable() -> Path | None:
    named = os.environ.get("TOSHOKAN_TEST_CODEX")
    candidate = Path(named) if named else REPOSITORY / ".venv-codex" / "bin" / "codex"
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _add_library(client: httpx.Client, comics: Path) -> Callable[[], None]:
    """Adds the library; returns what asks Codex to poll it."""
    base = str(client.base_url).rstrip("/")
    client.post(
        "/api/v3/auth/login/", json={"login": "admin", "password": "admin"}
    ).raise_for_status()
    headers = {"X-CSRFToken": client.cookies["csrftoken"], "Referer": f"{base}/"}
    library = client.post(
        "/api/v3/admin/library",
        json={"path": str(comics), "events": False, "poll": False, "pollEvery": "01:00:00", "groups": []},
        headers=headers,
    )  # fmt: skip
    library.raise_for_status()
    task = {"task": "poll", "libraryId": library.json()["pk"]}

    def poll() -> None:
        client.post("/api/v3/admin/librarian/task", json=task, headers=headers).raise_for_status()

    return poll


def _wait(
    check: Callable[[], bool], server: subprocess.Popen[bytes], deadline: float, log: Path
) -> None:
    while not check():
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(
                f"Codex did not get ready: {log.read_text(errors='replace')[-2000:]}"
            )
        time.sleep(0.5)


@contextlib.contextmanager
def codex_server(folder: Path, executable: Path, *, timeout: float = 180.0) -> Iterator[str]:
    """Start Codex on a fresh library of two issues; yields its OPDS root. Stopped on exit."""
    config, comics = folder / "config", folder / "comics" / SERIES
    config.mkdir(parents=True)
    comics.mkdir(parents=True)
    for seed, (name, pages) in enumerate(ISSUES.items(), start=1):
        (comics / name).write_bytes(cbz(pages, seed=seed * 10))
    port = _free_port()
    (config / "hypercorn.toml").write_text(f'bind = ["127.0.0.1:{port}"]\nroot_path = ""\n')
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, CODEX_CONFIG_DIR=str(config), CODEX_LOG_TO_FILE="0")
    log_path = folder / "codex.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [str(executable)], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            deadline = time.monotonic() + timeout

            def answers() -> bool:
                with contextlib.suppress(httpx.HTTPError):
                    return httpx.get(f"{base}/opds/v1.2/", timeout=2).status_code == 200
                return False

            _wait(answers, server, deadline, log_path)
            with httpx.Client(base_url=base, timeout=30) as client:
                poll = _add_library(client, comics.parent)
                asked = 0.0

                def imported() -> bool:
                    # Codex drops a poll that arrives before its watcher of the new library
                    # has started (it starts a moment after the library is added), and an
                    # unchanged library polled again costs nothing: ask until it imports.
                    nonlocal asked
                    if time.monotonic() - asked > POLL_AGAIN:
                        poll()
                        asked = time.monotonic()
                    feed = client.get(f"{base}/opds/v1.2/s/0/1?topGroup=s", timeout=5)
                    return SERIES in feed.text

                _wait(imported, server, deadline, log_path)
            yield f"{base}/opds/v1.2/"
        finally:
            stop(server, grace=20)
