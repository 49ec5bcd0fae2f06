"""Discovery of installed source adapters through the ``toshokan.sources`` entry points.

Any installed distribution can add an adapter by declaring, in its packaging
metadata::

    [project.entry-points."toshokan.sources"]
    myname = "my_package:MySource"

The name is what ``adapter = "myname"`` refers to in the configuration file.
"""

from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import click

from toshokan.sdk.source import Source

GROUP = "toshokan.sources"


class AdapterLoadError(Exception):
    pass


def installed_adapters() -> tuple[dict[str, type[Source[Any]]], dict[str, str]]:
    """Every adapter installed in this environment by entry-point name, and those that fail to load.

    One broken plugin must not hide the others, so failures are collected, not raised.
    """
    found: dict[str, type[Source[Any]]] = {}
    broken: dict[str, str] = {}
    for point in entry_points(group=GROUP):
        if point.name in found or point.name in broken:
            continue
        try:
            found[point.name] = _load(point.name, point.value, point.load)
        except AdapterLoadError as error:
            broken[point.name] = str(error)
    return found, broken


def adapter(name: str) -> type[Source[Any]]:
    """The adapter class called ``name``, or an error listing those that are installed."""
    for point in entry_points(group=GROUP, name=name):
        return _load(name, point.value, point.load)
    names = ", ".join(sorted(p.name for p in entry_points(group=GROUP))) or "none"
    raise AdapterLoadError(f"no source adapter named {name!r} is installed (installed: {names})")


def _load(name: str, target: str, load: object) -> type[Source[Any]]:
    try:
        cls = load()  # type: ignore[operator]
    except Exception as error:  # a broken plugin must name itself, not crash the host blindly
        raise AdapterLoadError(
            f"source adapter {name!r} ({target}) failed to import: {error}"
        ) from error
    if not (isinstance(cls, type) and issubclass(cls, Source)):
        raise AdapterLoadError(
            f"source adapter {name!r} ({target}) is not a toshokan Source subclass"
        )
    return cls


def embedded_default(data_dir: Path, folder: Path | None) -> tuple[str, dict[str, Any]] | None:
    """The adapter that serves out of the box, with its settings: what a bare ``serve`` runs."""
    adapters, _ = installed_adapters()
    for name, cls in sorted(adapters.items()):
        settings = cls.embedded_default(data_dir, folder)
        if settings is not None:
            return name, settings
    return None


def adapter_commands() -> dict[str, click.Command]:
    """Every installed adapter's subcommands by name; loaded only when a command is looked up."""
    adapters, _ = installed_adapters()  # `toshokan sources` reports broken plugins
    return {
        command.name: command
        for cls in adapters.values()
        for command in cls.commands()
        if command.name
    }
