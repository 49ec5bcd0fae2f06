"""Decompression work per page is capped in solid RAR archives too (issue 13, point 2).

The fixtures are real RAR 5 archives (see fixtures/README.md): a solid archive
decompresses every entry before the one asked for, a plain one only that entry."""

import shutil
from pathlib import Path

import pytest

from toshokan.sdk import archives
from toshokan.sdk.archives import ArchiveError, RarReader, rar_tool

from .archive_files import FIXTURES

PAGE = 633
SMALL_FIRST = PAGE + 2**20
BIG_FIRST = PAGE + 100 * 2**20
needs_tool = pytest.mark.skipif(rar_tool() is None, reason="no RAR tool installed")


def fixture(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copy(FIXTURES / name, tmp_path / name))


def test_work_counts_every_earlier_entry_of_a_solid_archive(tmp_path: Path) -> None:
    with RarReader(fixture("solid-small.rar", tmp_path)) as reader:
        assert [reader.work(n) for n in ("1.jpg", "2.jpg", "3.jpg")] == [
            SMALL_FIRST,
            SMALL_FIRST + PAGE,
            SMALL_FIRST + 2 * PAGE,
        ]
    with RarReader(fixture("plain-100m.rar", tmp_path)) as reader:
        assert [reader.work(n) for n in ("1.jpg", "2.jpg", "3.jpg")] == [BIG_FIRST, PAGE, PAGE]


def test_a_small_page_behind_a_large_solid_entry_is_refused(tmp_path: Path) -> None:
    """With the default limit: 100 MiB of zeros (a 6 KB file) before a 633-byte page.
    Refused from the directory alone, so the tool never runs (none is needed here)."""
    with RarReader(fixture("solid-100m.rar", tmp_path)) as reader:
        for name in ("2.jpg", "3.jpg"):
            with pytest.raises(ArchiveError, match="decompressed"):
                reader.read(name, 10**6)


@needs_tool
def test_pages_within_the_limit_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with RarReader(fixture("solid-small.rar", tmp_path)) as reader:
        first = reader.read("1.jpg", 2 * 2**20)
        assert first.startswith(b"\xff\xd8\xff") and len(first) == SMALL_FIRST
        monkeypatch.setattr(archives.limits, "MAX_DECOMPRESS_WORK", SMALL_FIRST + PAGE)
        assert reader.read("2.jpg", 10**6).startswith(b"\xff\xd8\xff")
        with pytest.raises(ArchiveError, match="decompressed"):
            reader.read("3.jpg", 10**6)


@needs_tool
def test_a_plain_archive_costs_only_the_page(tmp_path: Path) -> None:
    """Not solid: the page after the 100 MiB entry costs its own 633 bytes."""
    with RarReader(fixture("plain-100m.rar", tmp_path)) as reader:
        page = reader.read("3.jpg", 10**6)
    assert page.startswith(b"\xff\xd8\xff") and len(page) == PAGE


@needs_tool
def test_a_tool_that_runs_past_the_time_bound_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archives.limits, "MAX_DECOMPRESS_WORK", 2 * BIG_FIRST)
    monkeypatch.setattr(archives.rar, "RAR_TOOL_SECONDS", 0.01)
    reader = RarReader(fixture("plain-100m.rar", tmp_path))
    with reader, pytest.raises(ArchiveError, match="longer than"):
        reader.read("1.jpg", 2 * BIG_FIRST)


@needs_tool
def test_entry_names_are_not_read_as_patterns(tmp_path: Path) -> None:
    with RarReader(fixture("patterns.rar", tmp_path)) as reader:
        odd, plain = reader.read("a[1]*.jpg", 10**6), reader.read("3.jpg", 10**6)
    assert len(odd) == len(plain) == PAGE and odd != plain
