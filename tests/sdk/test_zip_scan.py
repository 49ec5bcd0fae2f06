"""A scan reads plain zip chapters without zipfile (issue 27, point 2), and learns from each
exactly what zipfile's reader would: the same pages, sizes, damaged-page warnings,
ComicInfo.xml and KOReader id. What it does not read the same way, it refuses, and the
scan reads that archive with zipfile."""

import io
import os
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from toshokan.sdk.archives import Listing, UnusualZip, ZipReader, scan_zip
from toshokan.sdk.archives.zipscan import WHOLE_FILE_BYTES

from .archive_files import jpeg

LIMIT = 256 * 1024
COMICINFO = b"<ComicInfo><Series>Kaze</Series><Number>3</Number></ComicInfo>"


def by_zipfile(path: Path, limit: int = LIMIT) -> tuple[Listing, str]:
    with ZipReader(path) as reader:
        return reader.listing(comicinfo_limit=limit), reader.partial_md5()


def same_as_zipfile(path: Path, limit: int = LIMIT) -> Listing:
    listing, digest = scan_zip(path, comicinfo_limit=limit)
    assert (listing, digest) == by_zipfile(path, limit)
    # Given the size a scan's walk saw, right or out of date, it reads the same.
    size = path.stat().st_size
    for seen in (size, size - 1, size + 1):
        assert scan_zip(path, comicinfo_limit=limit, size=seen) == (listing, digest)
    return listing


def write(path: Path, entries: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def test_a_stored_chapter_reads_as_zipfile_reads_it(tmp_path: Path) -> None:
    entries = {"2.jpg": jpeg(), "10.jpg": jpeg(), "1.jpg": jpeg(), "ComicInfo.xml": COMICINFO}
    listing = same_as_zipfile(write(tmp_path / "a.cbz", entries))
    assert [m.name for m in listing.pages] == ["1.jpg", "2.jpg", "10.jpg"]
    assert listing.comicinfo == COMICINFO and listing.warnings == []


def test_a_deflated_chapter_with_damaged_and_odd_entries(tmp_path: Path) -> None:
    entries = {
        "b/01.png": jpeg(),
        "b/02.jpg": b"<html>not an image</html>",
        "../escape.jpg": jpeg(),
        "/abs.jpg": jpeg(),
        "__MACOSX/._01.jpg": b"junk",
        "notes.txt": b"hello",
        "dir/": b"",
        "b/ComicInfo.xml": b"<ComicInfo><Series>Inner</Series></ComicInfo>",
        "ComicInfo.xml": COMICINFO,
        "été/03.jpg": jpeg(),
    }
    path = write(tmp_path / "b.cbz", entries, zipfile.ZIP_DEFLATED)
    listing = same_as_zipfile(path)
    assert len(listing.pages) == 3 and listing.comicinfo == COMICINFO
    assert any("is damaged" in w for w in listing.warnings)
    assert any("2 entries ignored" in w for w in listing.warnings)


def test_a_large_chapter_is_read_from_its_tail(tmp_path: Path) -> None:
    noise = os.urandom(WHOLE_FILE_BYTES)
    entries = {f"{n:03d}.jpg": jpeg() + noise[: n * 1000] for n in range(1, 40)}
    entries["big.jpg"] = noise  # a page past the bytes read with the directory
    entries["bad.jpg"] = noise[:100]
    entries["ComicInfo.xml"] = COMICINFO
    path = write(tmp_path / "c.cbz", entries, zipfile.ZIP_DEFLATED)
    assert path.stat().st_size > WHOLE_FILE_BYTES
    listing = same_as_zipfile(path)
    assert len(listing.pages) == 41 and len(listing.warnings) == 2


def test_symlinks_duplicates_and_a_large_comicinfo(tmp_path: Path) -> None:
    path = tmp_path / "d.cbz"
    with zipfile.ZipFile(path, "w") as archive:
        link = zipfile.ZipInfo("link.jpg")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
        archive.writestr("1.jpg", b"first, not an image")
        with pytest.warns(UserWarning):
            archive.writestr("1.jpg", jpeg())  # the last of a name is the one read
        archive.writestr("ComicInfo.xml", COMICINFO)
    listing = same_as_zipfile(path)
    assert [m.name for m in listing.pages] == ["1.jpg", "1.jpg"]
    listing = same_as_zipfile(path, limit=10)
    assert listing.comicinfo is None and any("larger than 10" in w for w in listing.warnings)


def plain_with_duplicate(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as archive, pytest.warns(UserWarning):
        archive.writestr("1.jpg", jpeg())
        archive.writestr("1.jpg", b"the last of a name is the one read")


def plain_with_link(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        link = zipfile.ZipInfo("2.jpg")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr("1.jpg", jpeg())
        archive.writestr(link, "1.jpg")


def plain_with_damaged_page(path: Path) -> None:
    write(path, {"1.jpg": jpeg(), "2.jpg": b"not an image", "ComicInfo.xml": COMICINFO})


def plain_with_nested_comicinfo(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("sub/", b"")
        archive.writestr("sub/comicinfo.XML", b"<ComicInfo><Series>Inner</Series></ComicInfo>")
        archive.writestr("sub/1.JPG", jpeg())
        archive.writestr("ComicInfo.xml", COMICINFO)
        archive.writestr("Other/ComicInfo.xml", b"<ComicInfo/>")


@pytest.mark.parametrize(
    "make",
    [plain_with_duplicate, plain_with_link, plain_with_damaged_page, plain_with_nested_comicinfo],
)
def test_plain_names_with_something_to_say_read_as_zipfile_reads_them(
    tmp_path: Path, make: Callable[[Path], None]
) -> None:
    """Names all plain, but a page or entry the general listing warns of, or a choice of
    ComicInfo.xml to make."""
    path = tmp_path / "p.cbz"
    make(path)
    listing = same_as_zipfile(path)
    if make is plain_with_nested_comicinfo:
        assert listing.comicinfo == COMICINFO and listing.warnings == []
    else:
        assert listing.warnings
    assert same_as_zipfile(path, limit=10).comicinfo is None


def test_a_streamed_chapter_with_data_descriptors(tmp_path: Path) -> None:
    class Unseekable(io.RawIOBase):
        def __init__(self) -> None:
            self.data = bytearray()

        def writable(self) -> bool:
            return True

        def write(self, data: object) -> int:
            chunk = bytes(data)  # type: ignore[call-overload]
            self.data += chunk
            return len(chunk)

    sink = Unseekable()
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in {"1.jpg": jpeg(), "ComicInfo.xml": COMICINFO}.items():
            with archive.open(name, "w") as entry:
                entry.write(data)
    path = tmp_path / "e.cbz"
    path.write_bytes(bytes(sink.data))
    assert same_as_zipfile(path).comicinfo == COMICINFO


def _comment(path: Path) -> None:
    with zipfile.ZipFile(path, "a") as archive:
        archive.comment = b"a comment"


def _spoiled(spoil: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def spoiled(path: Path) -> None:
        path.write_bytes(spoil(path.read_bytes()))

    return spoiled


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(_comment, id="comment"),
        pytest.param(_spoiled(lambda data: b"junk" + data), id="bytes before the archive"),
        pytest.param(_spoiled(lambda data: data[: len(data) // 2]), id="truncated"),
        pytest.param(_spoiled(lambda data: b"not a zip at all"), id="not a zip"),
        pytest.param(
            _spoiled(lambda data: data.replace(b"PK\x01\x02", b"PK\x01\x09", 1)), id="bad entry"
        ),
    ],
)
def test_what_it_does_not_read_like_zipfile_is_left_to_zipfile(
    tmp_path: Path, spoil: Callable[[Path], None]
) -> None:
    path = write(tmp_path / "f.cbz", {"1.jpg": jpeg(), "ComicInfo.xml": COMICINFO})
    spoil(path)
    with pytest.raises(UnusualZip):
        scan_zip(path, comicinfo_limit=LIMIT)
    with pytest.raises(UnusualZip):
        scan_zip(path, comicinfo_limit=LIMIT, size=path.stat().st_size)


def test_zip64_and_a_damaged_comicinfo_are_left_to_zipfile(tmp_path: Path) -> None:
    path = tmp_path / "g.cbz"
    with (
        zipfile.ZipFile(path, "w") as archive,
        archive.open("1.jpg", "w", force_zip64=True) as entry,
    ):
        entry.write(jpeg())
    same_as_zipfile(path)  # zip64 in the page's own header only
    with zipfile.ZipFile(path) as archive:
        at = archive.start_dir + 20  # the directory's compressed size: "see zip64"
    data = bytearray(path.read_bytes())
    data[at : at + 4] = b"\xff" * 4
    path.write_bytes(bytes(data))
    with pytest.raises(UnusualZip):
        scan_zip(path, comicinfo_limit=LIMIT)
    path = write(tmp_path / "h.cbz", {"1.jpg": jpeg(), "ComicInfo.xml": COMICINFO})
    path.write_bytes(
        path.read_bytes().replace(b"<Series>Kaze", b"<Series>Kazz", 1)
    )  # CRC no longer holds
    with pytest.raises(UnusualZip):
        scan_zip(path, comicinfo_limit=LIMIT)


class _Unseekable(io.RawIOBase):
    """A pipe-like file: zipfile writes each entry's sizes after its data, in a data
    descriptor, and 0 in its local header, as streaming zip writers (Java's
    ZipOutputStream, many download tools) do."""

    def __init__(self, target: io.BufferedWriter):
        self.target = target

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        return self.target.write(data)


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_streamed_chapter_has_no_damaged_pages(tmp_path: Path, compression: int) -> None:
    path = tmp_path / "streamed.cbz"
    with path.open("wb") as file, zipfile.ZipFile(_Unseekable(file), "w", compression) as archive:
        for n in range(1, 4):
            archive.writestr(f"{n:02d}.jpg", jpeg())
        archive.writestr("ComicInfo.xml", COMICINFO)
    with zipfile.ZipFile(path) as check:
        assert all(info.flag_bits & 0x8 for info in check.infolist())
    listing = same_as_zipfile(path)
    assert [m.name for m in listing.pages] == ["01.jpg", "02.jpg", "03.jpg"]
    assert listing.warnings == [] and listing.comicinfo == COMICINFO
