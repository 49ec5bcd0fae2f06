"""What a new user runs into in the first hour: HEAD, the API document, the command line."""

import os
import signal
import subprocess
import sys
import time

import httpx
import pytest
from click.testing import CliRunner

from tests.helpers.serving import REPO, free_port
from toshokan.cli import main

pytestmark = pytest.mark.anyio


async def test_head_answers_on_every_get_path(make_client):
    async with make_client() as (client, _):
        for path in ("/", "/catalog", "/catalog/health", "/catalog/title-001"):
            get = await client.get(path)
            head = await client.head(path)
            assert head.status_code == 200, path
            assert head.content == b"" and head.headers["etag"] == get.headers["etag"]
        missing = await client.head("/catalog/nothing-here")
        assert missing.status_code == 404


async def test_openapi_lists_each_operations_real_answers(make_client):
    async with make_client() as (client, _):
        document = (await client.get("/openapi.json")).json()
    assert document["openapi"].startswith("3.1")
    search = document["paths"]["/{source}/search"]["post"]
    assert set(search["responses"]) == {
        "200",
        "400",
        "401",
        "404",
        "408",
        "413",
        "429",
        "431",
        "500",
        "502",
        "504",
    }
    assert "422" not in str(document)
    error = search["responses"]["400"]["content"]["application/json"]["schema"]
    assert error == {"$ref": "#/components/schemas/ErrorResponse"}
    assert "ErrorResponse" in document["components"]["schemas"]
    auth = document["paths"]["/{source}/authenticate"]["post"]["responses"]["401"]
    assert auth["content"]["application/json"]["schema"]["$ref"].endswith("/AuthResponse")


def test_toml_syntax_error_is_one_line(tmp_path):
    config = tmp_path / "broken.toml"
    config.write_text('[server]\nport = 80\nhost = "unterminated\n')
    result = CliRunner().invoke(main, ["check-config", str(config)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert str(config) in result.output and "line 3" in result.output


def test_check_config_is_read_only_and_checks_the_library(tmp_path):
    library = tmp_path / "library"
    library.mkdir()
    data = tmp_path / "data"
    config = tmp_path / "toshokan.toml"
    config.write_text(f'[host]\ndata_dir = "{data}"\n[sources.local]\nroot = "{library}"\n')
    good = CliRunner().invoke(main, ["check-config", str(config)])
    assert good.exit_code == 0 and "OK" in good.output
    assert not data.exists()  # no secret written, no index built

    config.write_text(f'[sources.local]\nroot = "{tmp_path / "gone"}"\n')
    missing = CliRunner().invoke(main, ["check-config", str(config)])
    assert missing.exit_code == 2 and "gone does not exist or is not a folder" in missing.output

    config.write_text("[server]\nport = 9000\n")
    empty = CliRunner().invoke(main, ["check-config", str(config)])
    assert empty.exit_code == 2 and "no source is configured" in empty.output


def test_version_imports_no_adapter():
    probe = (
        "import sys\nfrom toshokan.cli import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('toshokan.sources.')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert "toshokan" in result.stdout and result.stdout.strip().endswith("[]")


def test_stopping_run_py_serve_stops_the_host(tmp_path):
    """`python3 run.py serve` becomes the host: a signal to it reaches the server."""
    port = free_port()
    env = {**os.environ, "TOSHOKAN_HOST__DATA_DIR": str(tmp_path)}
    process = subprocess.Popen(
        [sys.executable, "run.py", "serve", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/local/health"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(url, timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            raise AssertionError("the host did not start")
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        with pytest.raises(httpx.ConnectError):
            httpx.get(url, timeout=2)
    finally:
        if process.poll() is None:
            process.kill()


def check(config, text, **env):
    config.write_text(text)
    return CliRunner(env=env).invoke(main, ["check-config", str(config)])


def test_check_config_suggests_a_misspelt_key_or_section(tmp_path):
    config = tmp_path / "toshokan.toml"
    library = tmp_path / "library"
    library.mkdir()
    source = f'[sources.local]\nroot = "{library}"\n'
    key = check(config, f"[server]\nprot = 9000\n{source}")
    assert key.exit_code == 2 and key.output.count("\n") == 1
    assert "server.prot: Extra inputs are not permitted (did you mean 'port'?)" in key.output
    section = check(config, f"[sever]\nport = 9000\n{source}")
    assert section.exit_code == 2 and "(did you mean 'server'?)" in section.output
    adapter_key = check(config, f'{source}default_langauge = "fr"\n')
    assert adapter_key.exit_code == 2 and adapter_key.output.count("\n") == 1
    assert "default_langauge" in adapter_key.output
    assert "(did you mean 'default_language'?)" in adapter_key.output


def test_check_config_names_the_environment_variable_of_a_bad_value(tmp_path):
    config = tmp_path / "toshokan.toml"
    library = tmp_path / "library"
    library.mkdir()
    source = f'[sources.local]\nroot = "{library}"\n'
    host = check(config, source, TOSHOKAN_SERVER__PORT="eighty")
    assert host.exit_code == 2 and host.output.count("\n") == 1
    assert "server.port:" in host.output
    assert "(from the environment variable TOSHOKAN_SERVER__PORT)" in host.output
    adapter = check(config, source, TOSHOKAN_SOURCES__LOCAL__WATCH="sometimes")
    assert adapter.exit_code == 2 and adapter.output.count("\n") == 1
    assert "(from the environment variable TOSHOKAN_SOURCES__LOCAL__WATCH)" in adapter.output
    from_file = check(config, f"[server]\nport = 'eighty'\n{source}")
    assert from_file.exit_code == 2 and "environment" not in from_file.output


def test_check_config_refuses_mangadex_languages_that_are_not_codes(tmp_path):
    config = tmp_path / "toshokan.toml"
    wrong = check(config, '[sources.mangadex]\nlanguages = ["en", "english", "pt_BR"]\n')
    assert wrong.exit_code == 2 and wrong.output.count("\n") == 1
    assert "not a MangaDex language code: 'english', 'pt_br'" in wrong.output
    right = check(
        config,
        '[sources.mangadex]\nlanguages = ["en", "pt-br", "es-la", "ZH-HK"]\n'
        'title_languages = ["ja-ro", "ko-ro", "zh-ro", "ja"]\n',
    )
    assert right.exit_code == 0, right.output


EVERY_SECTION_BROKEN = """\
[host]
name = "Toshokan Host"
[server]
port = 99999
[limits]
rate_limt = 5
[sever]
host = "0.0.0.0"
[sources.local]
root = "{gone}"
[sources.other]
adapter = "nope"
[sources.dex]
adapter = "mangadex"
languages = 5
[sources.fine]
adapter = "local"
root = "{library}"
status = "retired"
"""
#: What each broken table of it is told, in the one line.
EVERY_PROBLEM = (
    "host.name: String should match pattern",
    "server.port: Input should be less than or equal to 65535",
    "limits.rate_limt: Extra inputs are not permitted (did you mean 'rate_limit'?)",
    "sever: Extra inputs are not permitted (did you mean 'server'?)",
    "sources.fine.status: Input should be 'active', 'deprecated' or 'removed'",
    "source 'local': settings root: Value error, {gone} does not exist or is not a folder",
    "source 'other': no source adapter named 'nope' is installed",
    "source 'dex': settings languages: Input should be a valid list",
    "the data directory {data} is a file, not a folder",
)


def every_section_broken(tmp_path):
    """A configuration with a problem in every table, and what check-config must say of each."""
    library, data = tmp_path / "library", tmp_path / "data"
    library.mkdir()
    data.write_text("a file where the data directory should be\n")
    names = {"gone": tmp_path / "gone", "library": library, "data": data}
    config = tmp_path / "toshokan.toml"
    config.write_text(EVERY_SECTION_BROKEN.format(**names))
    return config, [problem.format(**names) for problem in EVERY_PROBLEM]


def test_check_config_names_every_problem_of_every_table_in_one_line(tmp_path):
    config, problems = every_section_broken(tmp_path)
    result = CliRunner(env={"TOSHOKAN_HOST__DATA_DIR": str(tmp_path / "data")}).invoke(
        main, ["check-config", str(config)]
    )
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert result.output.startswith("toshokan: configuration error: ")
    for problem in problems:
        assert problem in result.output


def test_serve_with_a_bad_configuration_names_every_problem_in_one_line(tmp_path):
    config, problems = every_section_broken(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "toshokan", "serve", "--config", str(config)],
        capture_output=True,
        text=True,
        env={**os.environ, "TOSHOKAN_HOST__DATA_DIR": str(tmp_path / "data")},
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    for problem in problems:
        assert problem in result.stderr


def test_serve_names_every_source_that_cannot_be_built_in_one_line(tmp_path):
    """No table of the file is wrong, yet two sources cannot be made: both are named at once."""
    config = tmp_path / "toshokan.toml"
    config.write_text(
        f'[host]\ndata_dir = "{tmp_path / "data"}"\n'
        f'[sources.comics]\nadapter = "local"\nroot = "{tmp_path / "comics"}"\n'
        f'[sources.manga]\nadapter = "local"\nroot = "{tmp_path / "manga"}"\n'
    )
    result = subprocess.run(
        [sys.executable, "-m", "toshokan", "serve", "--config", str(config), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert f"source 'comics': settings root: Value error, {tmp_path / 'comics'}" in result.stderr
    assert f"source 'manga': settings root: Value error, {tmp_path / 'manga'}" in result.stderr
