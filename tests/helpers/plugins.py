"""Installing a third-party adapter the way pip would: a dist-info with an entry point."""

import sys
from pathlib import Path

from tests.helpers.serving import REPO


def install_plugin(
    site: Path, name: str = "catalog", target: str = "tests.helpers.catalog:Catalog"
) -> Path:
    """Write a distribution declaring ``name`` in ``toshokan.sources`` into ``site``."""
    dist = site / f"toshokan_plugin_{name}-1.0.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: toshokan-plugin-{name}\nVersion: 1.0\n"
    )
    (dist / "entry_points.txt").write_text(f"[toshokan.sources]\n{name} = {target}\n")
    return site


def plugin_env(site: Path) -> dict[str, str]:
    """Environment for a subprocess that sees the plugin and this repository's tests package."""
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO), env.get("PYTHONPATH", "")])
    return env


def activate(site: Path) -> None:
    if str(site) not in sys.path:
        sys.path.insert(0, str(site))
