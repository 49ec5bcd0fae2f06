"""Whether a live test of a real server skips or fails when the server is not installed, and
stopping one.

On a developer's machine a missing calibre or Codex skips its live test; in CI
(``CI`` set, or ``TOSHOKAN_LIVE_SERVERS=required``, as ``.ci/run`` sets after
installing both) it fails, so the live tests cannot silently stop running.
"""

import os
import subprocess

import pytest


def required() -> bool:
    return bool(os.environ.get("CI")) or os.environ.get("TOSHOKAN_LIVE_SERVERS") == "required"


def need(missing: str | None) -> None:
    """Skip (or, where live servers are required, fail) with ``missing`` when it is set."""
    if missing is None:
        return
    if required():
        pytest.fail(f"{missing}; .ci/run installs it")
    pytest.skip(missing)


def stop(server: subprocess.Popen[bytes], grace: float) -> None:
    """Ask the server to stop; after ``grace`` seconds, kill it."""
    server.terminate()
    try:
        server.wait(grace)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(10)
