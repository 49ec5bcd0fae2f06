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
    if stamp.is_file() and stamp.read_text() == wanted and PYTHON.exists():
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


def main(argv: list[str]) -> int:
    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    if command == "serve":
        ensure_environment("")
        return subprocess.call([str(PYTHON), "-m", "toshokan", "serve", *rest], cwd=ROOT)
    if command == "test":
        ensure_environment("dev")
        return subprocess.call([str(PYTHON), "-m", "pytest", *rest], cwd=ROOT)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
