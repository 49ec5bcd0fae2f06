"""A 7z or RAR chapter's directory is parsed once, not for every page (issue 13, point 2).

``open_chapter`` keeps idle readers, keyed by path, size and modification
time, so the page route gets one whose directory is already parsed."""

import os
from pathlib import Path

import py7zr
import pytest
import rarfile

from tests.sources.local.helpers import rar4
from toshokan.sdk.archives import IdleReaders, RarReader, SevenZipReader, open_chapter

from .archive_files import count_opens, jpeg, pages, seven_zip


def read_every_page(path: Path, kind: str, names: list[str]) -> list[bytes]:
    out = []
    for name in names:
        with open_chapter(path, kind, path.parent) as reader:
            out.append(reader.read(name, 10**6))
    return out


def test_7z_pages_share_one_directory_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = pages(20)
    path = seven_zip(tmp_path / "Ch.1.cb7", entries)
    opened = count_opens(monkeypatch, py7zr.SevenZipFile)
    assert read_every_page(path, "7z", list(entries)) == list(entries.values())
    assert opened == [str(path)]


def test_rar_pages_share_one_directory_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = pages(20)
    path = tmp_path / "Ch.1.cbr"
    path.write_bytes(rar4(entries))
    opened = count_opens(monkeypatch, rarfile.RarFile)
    assert read_every_page(path, "rar", list(entries)) == list(entries.values())
    assert opened == [str(path)]


def test_an_archive_changed_on_disk_is_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = seven_zip(tmp_path / "Ch.1.cb7", {"1.jpg": jpeg((255, 0, 0))})
    replacement = jpeg((0, 0, 255), size=(16, 16))
    new = seven_zip(tmp_path / "new.cb7", {"1.jpg": replacement})
    opened = count_opens(monkeypatch, py7zr.SevenZipFile)
    read_every_page(path, "7z", ["1.jpg"])
    new.replace(path)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert read_every_page(path, "7z", ["1.jpg"]) == [replacement]
    assert len(opened) == 2


class Tracked(SevenZipReader):
    released: list[Path] = []

    def release(self) -> None:
        Tracked.released.append(self.path)
        super().release()


def test_idle_readers_are_bounded_and_released(tmp_path: Path) -> None:
    paths = [seven_zip(tmp_path / f"{n}.cb7", pages(3)) for n in range(4)]
    idle = IdleReaders(capacity=2, max_entries=1000)
    Tracked.released = []
    readers = [idle.open(path, Tracked) for path in paths]
    for reader in readers:
        reader.close()
    # The two least recently returned were released (their archives closed) ...
    assert Tracked.released == paths[:2]
    # ... and the two kept are handed out again rather than reopened.
    again = [idle.open(paths[n], Tracked) for n in (3, 2, 0)]
    assert again[0] is readers[3]
    assert again[1] is readers[2]
    assert again[2] is not readers[0]
    idle.clear()
    assert Tracked.released == paths[:2]  # the three handed out are in use: not released
    for reader in again:
        reader.release()


def test_a_directory_larger_than_the_bound_is_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "big.cbr"
    path.write_bytes(rar4(pages(30)))
    idle = IdleReaders(capacity=8, max_entries=10)
    reader = idle.open(path, RarReader)
    reader.close()
    assert idle.open(path, RarReader) is not reader


def test_a_reader_is_never_handed_to_two_requests_at_once(tmp_path: Path) -> None:
    path = seven_zip(tmp_path / "Ch.1.cb7", pages(3))
    idle = IdleReaders()
    first = idle.open(path, SevenZipReader)
    second = idle.open(path, SevenZipReader)  # the first is still in use
    assert second is not first
    first.close()
    second.close()
    again = [idle.open(path, SevenZipReader) for _ in range(2)]
    assert {id(reader) for reader in again} == {id(first), id(second)}
    for reader in again:
        reader.release()


def test_closing_a_reader_twice_returns_it_once(tmp_path: Path) -> None:
    path = seven_zip(tmp_path / "Ch.1.cb7", pages(3))
    idle = IdleReaders()
    reader = idle.open(path, SevenZipReader)
    reader.close()
    reader.close()
    again = [idle.open(path, SevenZipReader) for _ in range(2)]
    assert again[0] is reader
    assert again[1] is not reader
    for each in again:
        each.release()
