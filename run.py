#!/usr/bin/env python3
"""Bootstrap for a fresh checkout: needs only Python 3.11+.

    python3 run.py serve [toshokan serve options]   start the host (sample library on first run)
    python3 run.py test [pytest options]            run the whole test suite

Both create ``.venv`` beside this file and install toshokan into it the first
time (and again whenever pyproject.toml changes), then hand over to it.
"""

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")


def ensure_environment(extras: str) -> None:
    """Create the virtualenv and install toshokan with ``extras`` unless already current."""
    if sys.version_info < (3, 11):  # noqa: UP036 - this script runs before anything checks
        sys.exit(f"toshokan needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    stamp = VENV / f".installed-{extras or 'base'}"
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    # An environment with the test extras installed serves too.
    current = [stamp, VENV / ".installed-dev"] if not extras else [stamp]
    if PYTHON.exists() and any(s.is_file() and s.read_text() == wanted for s in current):
        return
    if not PYTHON.exists():
        print("run.py: creating .venv", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    target = f".[{extras}]" if extras else "."
    print(
        f"run.py: installing toshokan{f'[{extras}]' if extras else ''} into .venv", file=sys.stderr
    )
    subprocess.run(
        [
            str(PYTHON),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-e",
            target,
        ],
        cwd=ROOT,
        check=True,
    )
    stamp.write_text(wanted)


def hand_over(args: list[str]) -> int:
    """Become ``args``: a signal that stops this script (Ctrl-C, kill) then stops the host too."""
    os.chdir(ROOT)
    if os.name == "nt":  # no exec that keeps the process on Windows
        return subprocess.call(args)
    os.execv(args[0], args)


def main(argv: list[str]) -> int:
    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    if command == "serve":
        ensure_environment("")
        return hand_over([str(PYTHON), "-m", "toshokan", "serve", *rest])
    if command == "test":
        ensure_environment("dev")
        return hand_over([str(PYTHON), "-m", "pytest", *rest])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
