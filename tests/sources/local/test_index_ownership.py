"""One index per library and per host: two libraries, or two hosts, never share one."""

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from tests.cluster.library import write_config
from tests.cluster.replicas import start_replica
from tests.helpers.local_sources import SourceFactory
from tests.helpers.serving import free_port, serve_command
from toshokan.cli import main
from toshokan.core.hosted import ConfigurationError
from toshokan.sdk import RequestContext, SearchRequest
from toshokan.sources.local import LocalLibrary, write_demo_library
from toshokan.sources.local.index import IndexLock, IndexUnavailable

from .helpers import cbz

CTX = RequestContext(base_url="http://testserver")
#: Starts a process holding an index's lock (as a lone host, or as a replica of a host).
Holder = Callable[[Path, str | None], subprocess.Popen[str]]


async def titles(source: LocalLibrary) -> set[str]:
    found = await source.search(SearchRequest(page=1, sort="title"), CTX)
    return {entry.title for entry in found.results}


@pytest.mark.anyio
async def test_two_libraries_on_one_data_directory_keep_their_own_index(
    tmp_path: Path, make_source: SourceFactory
) -> None:
    """`serve --library mine` beside the sample library: neither answers with the other's
    series, and going back to a library reads none of its chapters again."""
    mine, sample = tmp_path / "mine", tmp_path / "sample"
    cbz(mine / "Harbor Lights" / "Ch.1.cbz")
    write_demo_library(sample, series=2, chapters=1, pages=1)
    first = await make_source(mine)
    second = await make_source(sample)
    assert await titles(first) == {"Harbor Lights"}
    assert "Harbor Lights" not in await titles(second)
    assert first.index_path != second.index_path

    again = await make_source(mine, scan_on_start=False)
    report = await again.rescan()
    assert report.read == 0 and report.removed == 0
    assert await titles(again) == {"Harbor Lights"}


@pytest.mark.anyio
async def test_an_index_of_another_library_is_refused_in_one_line(
    tmp_path: Path, make_source: SourceFactory
) -> None:
    mine, other = tmp_path / "mine", tmp_path / "other"
    cbz(mine / "Harbor Lights" / "Ch.1.cbz")
    cbz(other / "Other" / "Ch.1.cbz")
    shared = tmp_path / "one.sqlite3"
    await make_source(mine, index_path=shared)
    with pytest.raises(ConfigurationError) as refused:
        await make_source(other, index_path=shared)
    message = str(refused.value)
    assert f"belongs to the library {mine.resolve()}" in message and "\n" not in message


@pytest.fixture
def held_elsewhere() -> Iterator[Holder]:
    """Another process holding an index's lock, as a lone host or as a replica of host A."""
    processes: list[subprocess.Popen[str]] = []

    def hold(index: Path, host: str | None) -> subprocess.Popen[str]:
        code = (
            "import sys; from pathlib import Path\n"
            "from toshokan.sources.local.index import IndexLock\n"
            f"IndexLock(Path({str(index)!r}), {host!r}).acquire()\n"
            "print('held', flush=True); sys.stdin.read()\n"
        )
        process = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        processes.append(process)
        assert process.stdout is not None and process.stdout.readline() == "held\n"
        return process

    yield hold
    for process in processes:
        process.kill()
        process.wait()


def test_a_second_process_on_an_index_is_refused_unless_a_replica_of_its_host(
    tmp_path: Path, held_elsewhere: Holder
) -> None:
    hold = held_elsewhere
    lone = tmp_path / "lone.sqlite3"
    hold(lone, None)
    for host in (None, "host-a"):
        with pytest.raises(IndexUnavailable, match="in use by another toshokan process"):
            IndexLock(lone, host).acquire()

    replicated = tmp_path / "replicated.sqlite3"
    hold(replicated, "host-a")
    replica = IndexLock(replicated, "host-a")
    replica.acquire()  # another replica of host A: welcome
    replica.release()
    for host in (None, "host-b"):
        with pytest.raises(IndexUnavailable, match="not a replica of this host"):
            IndexLock(replicated, host).acquire()


def test_scan_beside_a_running_host_is_refused_in_one_line(
    tmp_path: Path, held_elsewhere: Holder
) -> None:
    root = tmp_path / "lib"
    write_demo_library(root, series=1, chapters=1, pages=1)
    index = tmp_path / "i.sqlite3"
    held_elsewhere(index, None)
    result = CliRunner().invoke(
        main,
        ["scan", str(root), "--index", str(index), "--quiet"],
        env={"TOSHOKAN_HOST__DATA_DIR": str(tmp_path / "data")},
    )
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "in use by another toshokan process (pid" in lines[0]


def _chapters_in(index: Path) -> int:
    try:
        with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as db:
            return int(db.execute("SELECT count(*) FROM chapters").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_an_interrupted_scan_keeps_what_it_read(tmp_path: Path) -> None:
    """Ctrl-C during `toshokan scan`, then `scan` again: only the rest is read."""
    root = tmp_path / "lib"
    cbz(root / "Seed" / "Ch.1.cbz", pages=1)
    data = (root / "Seed" / "Ch.1.cbz").read_bytes()
    for series in range(40):
        folder = root / f"Series {series:02d}"
        folder.mkdir()
        for chapter in range(1, 251):
            (folder / f"Ch.{chapter}.cbz").write_bytes(data)
    total = 10001  # enough that a scan on a fast machine is still reading when stopped
    index = tmp_path / "i.sqlite3"
    command = [sys.executable, "-m", "toshokan", "scan", str(root), "--index", str(index)]
    scan = subprocess.Popen(
        [*command, "--workers", "2", "--quiet"],
        env={**os.environ, "TOSHOKAN_HOST__DATA_DIR": str(tmp_path / "data")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while _chapters_in(index) == 0 and scan.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    scan.send_signal(signal.SIGINT)
    _, errors = scan.communicate(timeout=120)
    assert scan.returncode == 130, errors
    said = re.fullmatch(
        r"Scan interrupted: the (\d+) chapters read so far are kept in .*\n", errors
    )
    assert said is not None, errors
    kept = _chapters_in(index)
    assert kept == int(said.group(1))  # every chapter read, not only those of the last commit
    assert 0 < kept < total

    again = subprocess.run(
        [*command, "--quiet"],
        env={**os.environ, "TOSHOKAN_HOST__DATA_DIR": str(tmp_path / "data")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    assert f"Indexed 41 series, {total} chapters ({total - kept} read this scan" in again.stdout


def test_one_serve_and_its_workers_share_the_index_a_second_serve_is_refused(
    tmp_path: Path,
) -> None:
    """`serve --workers 2` is one host; another `serve` of the same library and data
    directory is not, and stops with one line instead of scanning into the same index."""
    root = tmp_path / "library"
    write_demo_library(root, series=1, chapters=1, pages=1)
    config = write_config(tmp_path / "toshokan.toml", root)
    data = tmp_path / "data"
    first = start_replica(config, data, workers=2, ready_path="/local")
    try:
        for _ in range(8):  # both workers answer (the port spreads connections over them)
            assert httpx.get(f"{first.url}/local", timeout=10).status_code == 200
        second = subprocess.run(
            serve_command("--config", str(config), "--port", str(free_port())),
            env={**os.environ, "TOSHOKAN_HOST__DATA_DIR": str(data)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode != 0
        assert "in use by another toshokan process" in second.stderr
        assert "Traceback" not in second.stderr
        assert "in use by another" not in first.output()
    finally:
        first.stop()
