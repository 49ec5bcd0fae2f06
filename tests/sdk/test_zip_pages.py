"""A page of a plain zip is read off its kept directory without zipfile (issue 27, point 3),
and is exactly the bytes zipfile's reader gives; what zipfile would read otherwise or refuse
is left to it."""

import os
import struct
import zipfile
from pathlib import Path

import pytest

from toshokan.sdk.archives import ArchiveError, UnusualZip, ZipPages, ZipReader, ZipScan
from toshokan.sdk.archives.zippages import directory_of, read_page

from .archive_files import jpeg

LIMIT = 2 * 1024 * 1024


def write(path: Path, entries: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def page(pages: ZipPages, path: Path, name: str, limit: int = LIMIT) -> bytes:
    stat = path.stat()
    return pages.read(path, stat.st_size, stat.st_mtime_ns, name, limit)


def by_zipfile(path: Path, name: str) -> bytes:
    with ZipReader(path, shared=True) as reader:  # shared: through zipfile's own stream
        data = reader.read(name, LIMIT)
        reader.release()
        return data


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_pages_are_the_bytes_zipfile_reads(tmp_path: Path, compression: int) -> None:
    entries = {"1.jpg": jpeg(), "ページ/2.jpg": jpeg(size=(40, 30)), "3.jpg": b"\x00" * 300_000}
    path = write(tmp_path / "a.cbz", entries, compression)
    pages = ZipPages()
    for name in entries:
        assert page(pages, path, name) == by_zipfile(path, name) == entries[name]
        assert page(pages, path, name) == entries[name]  # off the kept directory


def test_a_name_written_twice_reads_as_its_last_entry(tmp_path: Path) -> None:
    path = tmp_path / "d.cbz"
    with zipfile.ZipFile(path, "w") as archive, pytest.warns(UserWarning):
        archive.writestr("1.jpg", b"first")
        archive.writestr("1.jpg", b"second")
    assert page(ZipPages(), path, "1.jpg") == by_zipfile(path, "1.jpg") == b"second"


def _central(data: bytes, field: str, value: int) -> bytes:
    """The archive with its first central directory entry's ``field`` set to ``value``."""
    at = data.index(b"PK\x01\x02")
    offset, fmt = {"flags": (8, "<H"), "crc": (16, "<L"), "compressed": (20, "<L")}[field]
    return (
        data[: at + offset] + struct.pack(fmt, value) + data[at + offset + struct.calcsize(fmt) :]
    )


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda data: _central(data, "crc", 1), id="bad CRC"),
        pytest.param(lambda data: _central(data, "flags", 0x1), id="encrypted"),
        pytest.param(lambda data: data.replace(b"1.jpg", b"X.jpg", 1), id="local name differs"),
        pytest.param(lambda data: data.replace(b"PK\x03\x04", b"PK\x03\x09", 1), id="no header"),
    ],
)
def test_what_zipfile_refuses_is_left_to_it(tmp_path: Path, spoil: object) -> None:
    path = write(tmp_path / "b.cbz", {"1.jpg": jpeg(), "2.jpg": jpeg()}, zipfile.ZIP_DEFLATED)
    path.write_bytes(spoil(path.read_bytes()))  # type: ignore[operator]
    with pytest.raises(UnusualZip):
        page(ZipPages(), path, "1.jpg")
    with pytest.raises(ArchiveError):
        by_zipfile(path, "1.jpg")


def test_overlapping_entries_are_left_to_zipfile(tmp_path: Path) -> None:
    """Newer zipfiles (3.11.8, 3.12.2) refuse an entry whose bytes run into the next one."""
    path = write(tmp_path / "o.cbz", {"1.jpg": jpeg(), "2.jpg": jpeg()}, zipfile.ZIP_DEFLATED)
    path.write_bytes(_central(path.read_bytes(), "compressed", 4000))
    with pytest.raises(UnusualZip):
        page(ZipPages(), path, "1.jpg")


def test_names_not_listed_and_large_pages_are_left_to_zipfile(tmp_path: Path) -> None:
    path = write(tmp_path / "c.cbz", {"1.jpg": jpeg(), "2.jpg": b"\x00" * 5_000})
    pages = ZipPages()
    with pytest.raises(UnusualZip):
        page(pages, path, "9.jpg")
    with pytest.raises(UnusualZip):
        page(pages, path, "2.jpg", limit=4_999)


def test_directories_are_kept_by_signature_within_a_bound_on_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scans: list[str] = []
    real: object = ZipScan.__init__

    def counting(self: ZipScan, path: Path) -> None:
        scans.append(Path(path).name)
        real(self, path)  # type: ignore[operator]

    monkeypatch.setattr(ZipScan, "__init__", counting)
    first = write(tmp_path / "1.cbz", {f"{n}.jpg": jpeg() for n in range(3)})
    second = write(tmp_path / "2.cbz", {f"{n}.jpg": jpeg() for n in range(3)})
    pages = ZipPages(max_entries=5)
    for name in ("0.jpg", "1.jpg", "2.jpg"):
        page(pages, first, name)
    assert scans == ["1.cbz"]
    page(pages, second, "0.jpg")  # six entries in all: the first archive's directory leaves
    page(pages, first, "0.jpg")
    assert scans == ["1.cbz", "2.cbz", "1.cbz"]
    # Rewritten on disk (another size and time): its directory is read again.
    write(first, {"0.jpg": b"new"})
    os.utime(first, ns=(1, 1))
    assert page(pages, first, "0.jpg") == b"new"
    assert scans == ["1.cbz", "2.cbz", "1.cbz", "1.cbz"]


def test_an_entry_claiming_more_bytes_than_its_page_needs_is_never_read_whole(
    tmp_path: Path,
) -> None:
    """Its bytes are left to zipfile, which reads them a piece at a time: memory stays
    bounded by the page's limit, not by what the directory says."""
    path = write(tmp_path / "e.cbz", {"1.jpg": jpeg(), "pad.bin": os.urandom(200_000)})
    spoiled = _central(path.read_bytes(), "compressed", 150_000)
    at = spoiled.index(b"PK\x01\x02") + 10  # the first entry's method: deflated
    path.write_bytes(spoiled[:at] + struct.pack("<H", zipfile.ZIP_DEFLATED) + spoiled[at + 2 :])
    with ZipScan(path) as scan:
        directory = directory_of(scan)
    asked: list[int] = []

    def read(offset: int, count: int) -> bytes:
        asked.append(count)
        return b""

    with pytest.raises(UnusualZip):
        read_page(read, directory, "1.jpg", LIMIT)
    assert asked == []
