"""A package's names imported when first asked for (a module ``__getattr__``, PEP 562).

A scan's reading processes import :mod:`toshokan.sdk` and the local source's
package for a few of their modules; importing every public name's module at
once (pydantic's models, httpx) cost each process a quarter of a second of CPU.
"""

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: a name of ``modules`` (name -> the module
    defining it) is imported at its first use and kept in the package, so that later
    uses find it there without a call."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        if name not in modules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(modules[name]), name)
        namespace[name] = value
        return value

    return __getattr__
