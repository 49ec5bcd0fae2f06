"""A reader of the repository finds what the README points to, and the licence it declares."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def test_every_document_the_readme_names_is_in_the_repository() -> None:
    named = set(re.findall(r"[`(]([A-Za-z0-9_./-]+\.md)[`)]", README.read_text()))
    assert "docs/interface.md" in named
    missing = sorted(name for name in named if not (ROOT / name).is_file())
    assert missing == []


def test_the_licence_file_is_the_one_the_package_declares() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"  # an SPDX expression, as setuptools now requires
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert "Copyright (c) the toshokan authors" in text
