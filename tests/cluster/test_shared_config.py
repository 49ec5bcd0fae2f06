"""`[cluster] redis` in check-config and serve: a missing package is one line, a silent Redis a warning."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.serving import REPO, free_port

# The redis package made unimportable, as on a host installed without toshokan[redis].
WITHOUT_REDIS = "import sys; sys.modules['redis'] = None; from toshokan.cli import main; main()"


def config(tmp_path: Path, section: str) -> Path:
    path = tmp_path / "toshokan.toml"
    path.write_text(
        f'[host]\ndata_dir = "{tmp_path / "data"}"\n{section}\n[sources.local]\nroot = "{tmp_path}"\n',
        encoding="utf-8",
    )
    return path


def toshokan(*args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "toshokan"]
    return subprocess.run(
        [*command, *args], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize(
    ("section", "setting"),
    [
        ('[cluster]\nredis = "redis://127.0.0.1:6379/0"', "[cluster] redis"),
        ('[limits]\nstorage = "redis://127.0.0.1:6379/0"', "[limits] storage"),
    ],
)
@pytest.mark.parametrize("command", ["check-config", "serve"])
def test_a_missing_redis_package_is_one_line(
    tmp_path: Path, section: str, setting: str, command: str
) -> None:
    path = config(tmp_path, section)
    args = (
        [command, str(path)]
        if command == "check-config"
        else [command, "--config", str(path), "--port", str(free_port())]
    )
    done = toshokan(*args, code=WITHOUT_REDIS)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"toshokan: configuration error: {setting} needs the redis package: "
        "pip install 'toshokan[redis]'"
    ]


def test_a_redis_that_does_not_answer_is_a_warning(tmp_path: Path) -> None:
    port = 1  # nothing listens on tcpmux (a just-freed ephemeral port may connect to itself)
    path = config(tmp_path, f'[cluster]\nredis = "redis://127.0.0.1:{port}/0"')
    done = toshokan("check-config", str(path))
    assert done.returncode == 0
    assert done.stdout.strip() == f"{path}: OK (1 source(s): local)"
    [warning] = done.stderr.strip().splitlines()
    assert warning.startswith(f"toshokan: warning: [cluster] redis: Redis at 127.0.0.1:{port} ")


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ('[cluster]\nredis = "10.0.0.5:6379"', "cluster.redis"),
        ('[limits]\nstorage = "memcached://10.0.0.5"', "limits.storage"),
    ],
)
def test_a_redis_url_is_checked(tmp_path: Path, section: str, key: str) -> None:
    done = toshokan("check-config", str(config(tmp_path, section)))
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"toshokan: configuration error: {key}: ")
    assert "redis://" in line
