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


def test_a_star_import_in_a_new_process_gives_every_name() -> None:
    script = (
        "from toshokan.sdk import *\n"
        "import toshokan.sdk\n"
        "missing = [n for n in toshokan.sdk.__all__ if n not in globals()]\n"
        "assert not missing, missing\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_reading_a_chapter_imports_no_http_client_or_models() -> None:
    """A scan's reading processes import the reading module only: the HTTP client and the
    models (a quarter of a second of CPU a process) stay out of them."""
    script = (
        "import sys\n"
        "import toshokan.sources.local.reading\n"
        "loaded = sorted(m for m in ('httpx', 'pydantic', 'toshokan.models') if m in sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
