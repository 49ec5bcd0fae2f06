"""The example configuration and systemd unit in examples/ work as they are shipped."""

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import pytest

from tests.helpers.serving import REPO
from toshokan.cli import serve

EXAMPLES = REPO / "examples"
CONFIG = EXAMPLES / "toshokan.toml"
UNIT = EXAMPLES / "toshokan.service"


def toshokan(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toshokan", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_the_example_configuration_passes_check_config(tmp_path: Path) -> None:
    library = tmp_path / "comics"
    library.mkdir()
    # Its paths, pointed at this test's directory; every other value as shipped.
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "TOSHOKAN_HOST__DATA_DIR": str(tmp_path / "data"),
        "TOSHOKAN_SOURCES__LOCAL__ROOT": str(library),
    }
    checked = toshokan("check-config", str(CONFIG), env=env)
    assert checked.returncode == 0, checked.stderr
    assert f"{CONFIG}: OK (1 source(s): local)" in checked.stdout


def test_the_example_sets_every_section_the_host_reads() -> None:
    from toshokan.config import HostSettings

    text = CONFIG.read_text(encoding="utf-8")
    shown = set(tomllib.loads(text)) | set(re.findall(r"^# \[(\w+)\]", text, re.MULTILINE))
    assert set(HostSettings.model_fields) <= shown, set(HostSettings.model_fields) - shown


def unit_values(key: str) -> list[str]:
    return re.findall(rf"^{key}=(.*)$", UNIT.read_text(encoding="utf-8"), re.MULTILINE)


def test_the_unit_serves_with_flags_the_command_takes() -> None:
    (start,) = unit_values("ExecStart")
    program, command, *args = start.split()
    assert program.endswith("/toshokan") and command == "serve"
    context = serve.make_context("serve", list(args))  # refuses an unknown or bad flag
    assert context.params["log_format"] == "json"
    assert str(context.params["config"]) == "/etc/toshokan/toshokan.toml"
    with pytest.raises(click.UsageError):
        serve.make_context("serve", ["--log-format", "xml"])


def test_the_unit_s_state_directory_is_the_example_s_data_dir() -> None:
    (state,) = unit_values("StateDirectory")
    settings = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    assert settings["host"]["data_dir"] == f"/var/lib/{state}"
    assert unit_values("DynamicUser") == ["yes"] and unit_values("ProtectSystem") == ["strict"]


def test_systemd_accepts_the_unit(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    # The unit as installed, with this checkout's toshokan where the unit expects /opt's.
    unit = tmp_path / "toshokan.service"
    executable = str(Path(sys.executable).with_name("toshokan"))
    unit.write_text(
        UNIT.read_text(encoding="utf-8").replace("/opt/toshokan/bin/toshokan", executable)
    )
    verified = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60, check=False
    )
    assert verified.returncode == 0 and not verified.stderr.strip(), verified.stderr
