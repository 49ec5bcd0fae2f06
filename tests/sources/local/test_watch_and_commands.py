"""The folder watcher, and the ``scan``/``demo``/``hash-secret`` commands."""

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.helpers.local_sources import SourceFactory
from toshokan.cli import main
from toshokan.sdk import RequestContext
from toshokan.sources.local import write_demo_library
from toshokan.sources.local.commands import demo_command, hash_secret_command
from toshokan.sources.local.credentials import check_hash
from toshokan.sources.local.scanner import Scanner

from .helpers import cbz

CTX = RequestContext(base_url="http://testserver")


async def _until(condition, limit: float = 20.0) -> bool:
    """Poll a condition; the limit only bounds a failing test, nothing is timed."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while loop.time() < deadline:
        if await condition():
            return True
        await asyncio.sleep(0.1)
    return False


@pytest.mark.anyio
async def test_watcher_picks_up_changes(demo_root: Path, make_source: SourceFactory) -> None:
    source = await make_source(demo_root, watch=True)
    assert source._watcher is not None
    await asyncio.sleep(0.3)  # let the watcher subscribe

    cbz(demo_root / "Fresh Arrival" / "Ch.1.cbz")

    async def added() -> bool:
        return source.snapshot.series == 7

    assert await _until(added)
    assert (await source.manga("fresh-arrival", CTX)).title == "Fresh Arrival"

    (demo_root / "Fresh Arrival").rename(demo_root / "Renamed Arrival")

    async def renamed() -> bool:
        index = source._require_index()
        return (
            await asyncio.to_thread(index.series_by_slug, "renamed-arrival") is not None
            and await asyncio.to_thread(index.series_by_slug, "fresh-arrival") is None
        )

    assert await _until(renamed)
    shutil.rmtree(demo_root / "Renamed Arrival")

    async def removed() -> bool:
        return source.snapshot.series == 6

    assert await _until(removed)
    await source.shutdown()
    assert source._watcher is None


def test_scan_command_prints_summary(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    write_demo_library(root, series=3, chapters=2, pages=1)
    (root / "junk.txt").write_text("x")
    (root / "broken.cbz").write_bytes(b"nope")
    runner = CliRunner(env={"TOSHOKAN_HOST__DATA_DIR": str(tmp_path / "data")})
    result = runner.invoke(main, ["scan", str(root), "--index", str(tmp_path / "i.sqlite3")])
    assert result.exit_code == 0, result.output
    assert "Indexed 3 series" in result.output
    assert "junk.txt: not a chapter" in result.output
    assert "broken.cbz: unreadable chapter" in result.output
    again = runner.invoke(
        main, ["scan", str(root), "--index", str(tmp_path / "i.sqlite3"), "--quiet"]
    )
    assert "0 read this scan" in again.output
    missing = runner.invoke(main, ["scan", str(tmp_path / "missing")])
    assert missing.exit_code != 0


def test_scan_into_a_pipe_prints_only_the_summary(tmp_path: Path) -> None:
    """The progress bar is for a terminal; a file or pipe gets the clean summary."""
    root = tmp_path / "lib"
    write_demo_library(root, series=3, chapters=2, pages=1)
    result = subprocess.run(
        [sys.executable, "-m", "toshokan", "scan", str(root), "--index", str(tmp_path / "i")],
        env={**os.environ, "TOSHOKAN_HOST__DATA_DIR": str(tmp_path / "data")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.startswith("Indexed 3 series")
    assert "Reading" not in result.stdout and "\r" not in result.stdout


@pytest.mark.anyio
async def test_scan_builds_the_index_serve_reads(
    tmp_path: Path, make_source: SourceFactory
) -> None:
    """Without --index, the index goes where `serve` looks: [host] data_dir of --config, in
    the file of that library; serve then has nothing left to read."""
    root = tmp_path / "lib"
    write_demo_library(root, series=2, chapters=1, pages=1)
    config = tmp_path / "toshokan.toml"
    config.write_text(f'[host]\ndata_dir = "{tmp_path / "data"}"\n')
    result = CliRunner().invoke(main, ["--config", str(config), "scan", str(root), "--quiet"])
    assert result.exit_code == 0, result.output
    source = await make_source(root, scan_on_start=False)
    assert f"Index: {source.index_path}" in result.output
    assert source.snapshot.series == 2


def test_demo_command(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        demo_command, [str(tmp_path / "d"), "--series", "7", "--chapters", "2", "--pages", "1"]
    )
    assert result.exit_code == 0, result.output
    entries = sorted(p.name for p in (tmp_path / "d").iterdir())
    assert len(entries) == 7
    assert any(p.suffix == ".cb7" for p in (tmp_path / "d").rglob("*"))
    assert any(p.name == "series.json" for p in (tmp_path / "d").rglob("*"))


def test_hash_secret_command() -> None:
    result = CliRunner().invoke(hash_secret_command, ["--secret", "pw"])
    assert result.exit_code == 0
    assert check_hash("pw", result.output.strip())


@pytest.mark.anyio
async def test_index_inside_the_library_is_not_content(
    demo_root: Path, make_source: SourceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = await make_source(demo_root, index_path=demo_root / "index.sqlite3", watch=True)
    walked = await source.rescan()
    assert not [path for path, _ in walked.skipped if "index.sqlite3" in path]
    opened: list[Any] = []
    read = Scanner.read_chapter

    def counted(self: Scanner, chapter: Any) -> Any:
        opened.append(chapter)
        return read(self, chapter)

    monkeypatch.setattr(Scanner, "read_chapter", counted)
    cbz(demo_root / "Another" / "Ch.1.cbz")

    async def added() -> bool:
        return source.snapshot.series == 7

    assert await _until(added)
    await asyncio.sleep(2)  # a feedback loop would keep rescanning here
    report = await source.rescan()
    assert report.read == 0 and len(opened) == 1
