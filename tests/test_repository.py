"""What the repository declares holds: the documents the README names, the licence, and
dependency ranges that stop at versions the host was not tested with."""

import re
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_every_document_the_readme_names_is_in_the_repository() -> None:
    named = set(re.findall(r"[`(]([A-Za-z0-9_./-]+\.md)[`)]", README.read_text()))
    assert "docs/interface.md" in named
    missing = sorted(name for name in named if not (ROOT / name).is_file())
    assert missing == []


def dependencies() -> dict[str, Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    return {req.name: req for req in map(Requirement, listed)}


def test_what_the_server_reaches_into_is_held_to_the_tested_minor_version() -> None:
    """uvicorn's private httptools protocol is subclassed: a new minor release may break it."""
    for name in ("uvicorn", "httptools"):
        requirement = dependencies()[name]
        installed = version(name)
        assert installed in requirement.specifier, (name, installed)
        uppers = [spec.version for spec in requirement.specifier if spec.operator == "<"]
        major, minor = installed.split(".")[:2]
        assert uppers == [f"{major}.{int(minor) + 1}"], (name, str(requirement.specifier))


def test_the_test_client_runs_without_a_deprecation_warning() -> None:
    """Starlette's TestClient warns when it falls back to httpx; httpx2 is in the dev extras."""
    assert "httpx2" in dependencies()
    imported = subprocess.run(
        [sys.executable, "-W", "error", "-c", "import starlette.testclient"],
        capture_output=True,
        text=True,
    )
    assert imported.returncode == 0, imported.stderr[-500:]


def test_the_licence_file_is_the_one_the_package_declares() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"  # an SPDX expression, as setuptools now requires
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert "Copyright (c) the toshokan authors" in text
