"""The SDK's public names, imported when first asked for, are the objects their modules
define: a source author's ``from toshokan.sdk import X`` works for every name listed."""

import importlib
import subprocess
import sys

import pytest

import toshokan.sdk
import toshokan.sources.local


@pytest.mark.parametrize("package", [toshokan.sdk, toshokan.sources.local])
def test_every_listed_name_is_there_and_nothing_else_is_made_up(package: object) -> None:
    names = package.__all__  # type: ignore[attr-defined]
    assert len(set(names)) == len(names)
    for name in names:
        value = getattr(package, name)
        defined_in = getattr(value, "__module__", None)
        if defined_in is not None and defined_in.startswith("toshokan."):
            assert getattr(importlib.import_module(defined_in), name) is value, name
    with pytest.raises(AttributeError):
        package.NoSuchName  # type: ignore[attr-defined]  # noqa: B018


def in_a_new_process(*lines: str) -> None:
    subprocess.run([sys.executable, "-c", "\n".join(lines)], check=True)


def test_a_star_import_in_a_new_process_gives_every_name() -> None:
    in_a_new_process(
        "from toshokan.sdk import *",
        "import toshokan.sdk",
        "missing = [n for n in toshokan.sdk.__all__ if n not in globals()]",
        "assert not missing, missing",
    )


def test_reading_a_chapter_imports_no_http_client_or_models() -> None:
    """A scan's reading processes import the reading module only: the HTTP client and the
    models (a quarter of a second of CPU a process) stay out of them."""
    in_a_new_process(
        "import sys",
        "import toshokan.sources.local.reading",
        "loaded = sorted(m for m in ('httpx', 'pydantic', 'toshokan.models') if m in sys.modules)",
        "assert not loaded, loaded",
    )
