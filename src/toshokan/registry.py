"""Discovery of installed source adapters through the ``toshokan.sources`` entry points.

Any installed distribution can add an adapter by declaring, in its packaging
metadata::

    [project.entry-points."toshokan.sources"]
    myname = "my_package:MySource"

The name is what ``adapter = "myname"`` refers to in the configuration file.
"""

from importlib.metadata import entry_points

from toshokan.sdk.source import Source

GROUP = "toshokan.sources"


class AdapterLoadError(Exception):
    pass


def installed_adapters() -> tuple[dict[str, type[Source]], dict[str, str]]:
    """Every adapter installed in this environment by entry-point name, and those that fail to load.

    One broken plugin must not hide the others, so failures are collected, not raised.
    """
    found: dict[str, type[Source]] = {}
    broken: dict[str, str] = {}
    for point in entry_points(group=GROUP):
        if point.name in found or point.name in broken:
            continue
        try:
            found[point.name] = _load(point.name, point.value, point.load)
        except AdapterLoadError as error:
            broken[point.name] = str(error)
    return found, broken


def adapter(name: str) -> type[Source]:
    """The adapter class called ``name``, or an error listing those that are installed."""
    for point in entry_points(group=GROUP, name=name):
        return _load(name, point.value, point.load)
    names = ", ".join(sorted(p.name for p in entry_points(group=GROUP))) or "none"
    raise AdapterLoadError(f"no source adapter named {name!r} is installed (installed: {names})")


def _load(name: str, target: str, load: object) -> type[Source]:
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
