"""examples/toshokan.toml with its `[cluster]` block uncommented, as its comment tells an
operator to, is a valid configuration: check-config reaches the Redis and PostgreSQL it names."""

import subprocess
import sys
from pathlib import Path

from tests.helpers.serving import REPO

EXAMPLE = REPO / "examples" / "toshokan.toml"
# The block as shipped, commented out, with the addresses docs/clustering.md's deployment uses.
REDIS_LINE = '# redis = "redis://10.0.0.5:6379/0"'
DATABASE_LINE = '# database = "postgresql://toshokan@10.0.0.6/toshokan"'


def uncommented(redis_url: str, database_url: str) -> str:
    """The example with its `[cluster]` lines uncommented and pointed at this test's servers."""
    text = EXAMPLE.read_text(encoding="utf-8")
    lines = text.splitlines()
    for shipped in ("# [cluster]", REDIS_LINE, DATABASE_LINE):
        assert sum(line.startswith(shipped) for line in lines) == 1, shipped
    return (
        text.replace("\n# [cluster]\n", "\n[cluster]\n")
        .replace(REDIS_LINE, f'redis = "{redis_url}"')
        .replace(DATABASE_LINE, f'database = "{database_url}"')
    )


def check_config(config: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``toshokan check-config config`` with the example's paths pointed into ``tmp_path``."""
    library = tmp_path / "comics"
    library.mkdir(exist_ok=True)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "TOSHOKAN_HOST__DATA_DIR": str(tmp_path / "data"),
        "TOSHOKAN_SOURCES__LOCAL__ROOT": str(library),
    }
    return subprocess.run(
        [sys.executable, "-m", "toshokan", "check-config", str(config)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_the_example_with_its_cluster_block_uncommented_passes_check_config(
    tmp_path: Path, redis_url: str, postgres_url: str
) -> None:
    config = tmp_path / "toshokan.toml"
    config.write_text(uncommented(redis_url, postgres_url), encoding="utf-8")
    checked = check_config(config, tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.strip() == f"{config}: OK (1 source(s): local)"
    assert checked.stderr == ""  # no misspelt key, no server it could not reach

    # check-config reads the block's keys: misspelt, the same file is refused.
    config.write_text(
        uncommented(redis_url, postgres_url).replace('\nredis = "', '\nrediss = "'),
        encoding="utf-8",
    )
    refused = check_config(config, tmp_path)
    assert refused.returncode == 2 and "rediss" in refused.stderr
