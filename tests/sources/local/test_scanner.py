"""Scanning: what is indexed, what is skipped and why, and incremental updates."""

import os
import pickle
import re
import shutil
import zipfile
from pathlib import Path

import py7zr
import pytest

from toshokan.sdk.archives import rar_tool
from toshokan.sources.local.discovery import FoundChapter, LibraryUnavailable
from toshokan.sources.local.index import Index
from toshokan.sources.local.index.update import ScanCancelled
from toshokan.sources.local.scanner import Scanner

from .helpers import cbz, comicinfo, jpeg, png, rar4


def scanner_for(root: Path, tmp_path: Path, name: str = "index.sqlite3") -> Scanner:
    return Scanner(root, Index(tmp_path / name))


def slugs(scanner: Scanner) -> dict[str, str]:
    db = scanner.index.reader()
    out = {row[0]: row[1] for row in db.execute("SELECT relpath, slug FROM series")}
    out |= {row[0]: row[1] for row in db.execute("SELECT relpath, slug FROM chapters")}
    return out


def reasons(report_items: list[tuple[str, str]]) -> dict[str, str]:
    return dict(report_items)


def test_demo_library_is_indexed(demo_root: Path, tmp_path: Path) -> None:
    scanner = scanner_for(demo_root, tmp_path)
    report = scanner.scan()
    assert report.series == 6
    assert report.chapters == 23
    assert report.skipped == []
    kinds = {row[0] for row in scanner.index.reader().execute("SELECT kind FROM chapters")}
    assert kinds == {"zip", "7z", "dir"}


def test_rescan_reads_only_changed_files(demo_root: Path, tmp_path: Path) -> None:
    scanner = scanner_for(demo_root, tmp_path)
    assert scanner.scan().read == 23
    report = scanner.scan()
    assert report.read == 0 and not report.changed

    # A new index object over the same file (a restart) reads nothing either.
    restarted = Scanner(demo_root, Index(tmp_path / "index.sqlite3"))
    assert restarted.scan().read == 0

    target = demo_root / "Iron Garden" / "Iron Garden Ch.002 [Gearworks].cbz"
    cbz(target, pages=5)
    report = scanner.scan()
    assert report.read == 1 and report.updated == 1

    # Touching a page of an image-folder chapter re-reads that one chapter only.
    page = demo_root / "Paper Cranes" / "Chapter 02" / "1.jpg"
    page.write_bytes(jpeg(size=(10, 10)))
    assert scanner.scan().read == 1


def test_additions_removals_and_renames(demo_root: Path, tmp_path: Path) -> None:
    scanner = scanner_for(demo_root, tmp_path)
    scanner.scan()
    cbz(demo_root / "New Series" / "Ch.001.cbz")
    report = scanner.scan()
    assert report.added == 1 and report.series == 7
    assert slugs(scanner)["New Series"] == "new-series"

    os.remove(demo_root / "Iron Garden" / "Iron Garden Ch.004 [Gearworks].cbz")
    report = scanner.scan()
    assert report.removed == 1 and report.chapters == 23

    (demo_root / "New Series").rename(demo_root / "Renamed Series")
    report = scanner.scan()
    current = slugs(scanner)
    assert "New Series" not in current
    assert current["Renamed Series"] == "renamed-series"
    assert report.series == 7

    shutil.rmtree(demo_root / "Renamed Series")
    assert scanner.scan().series == 6


def test_a_rescan_notices_what_leaves_the_folder_listing_alike(
    demo_root: Path, tmp_path: Path
) -> None:
    """A rescan looks only at the series whose chapters' names and signatures changed;
    changes that keep a folder's own time or a file's size are changes all the same."""
    scanner = scanner_for(demo_root, tmp_path)
    scanner.scan()
    series = demo_root / "Iron Garden"
    chapter = series / "Iron Garden Ch.002 [Gearworks].cbz"
    # Rewritten in place to the same size: only its time says so.
    stat = chapter.stat()
    chapter.write_bytes(chapter.read_bytes())
    os.utime(chapter, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert chapter.stat().st_size == stat.st_size
    report = scanner.scan()
    assert (report.read, report.updated) == (1, 1)

    # Renamed, keeping its size and time (as mv does).
    renamed = series / "Iron Garden Ch.002 [Gearworks] v2.cbz"
    chapter.rename(renamed)
    report = scanner.scan()
    assert (report.added, report.removed, report.chapters) == (1, 1, 23)
    relpaths = {row[0] for row in scanner.index.reader().execute("SELECT relpath FROM chapters")}
    assert f"Iron Garden/{renamed.name}" in relpaths
    assert f"Iron Garden/{chapter.name}" not in relpaths


def test_a_chapter_dated_past_2262_is_indexed_and_its_changes_noticed(tmp_path: Path) -> None:
    """The walk keeps a file's time in 64 bits of nanoseconds, which end in 2262; a chapter
    dated later (a wrong clock, ``touch -d 2300-01-01``) is indexed and rescanned all the same."""
    root = tmp_path / "lib"
    chapter = root / "Far" / "Ch.1.cbz"
    cbz(chapter)
    cbz(root / "Far" / "Ch.2.cbz")
    far = 2**63 // 1_000_000_000 + 1000  # seconds
    try:
        os.utime(chapter, (far, far))
    except (OverflowError, OSError) as error:
        pytest.skip(f"this file system keeps no such time ({error})")
    scanner = scanner_for(root, tmp_path)
    report = scanner.scan()
    assert (report.chapters, report.skipped) == (2, [])
    assert scanner.scan().read == 0
    cbz(chapter, pages=3)
    os.utime(chapter, (far + 1, far + 1))
    report = scanner.scan()
    assert (report.read, report.updated, report.chapters) == (1, 1, 2)


def test_a_chapter_that_becomes_a_link_to_the_same_file_is_not_read_again(
    tmp_path: Path,
) -> None:
    """The walk signs a plain archive from its raw listing and one reached through a link
    from its stat: the same file signs the same either way, so it is not read again."""
    root = tmp_path / "lib"
    chapter = root / "Held" / "Ch.1.cbz"
    cbz(chapter)
    cbz(root / "Held" / "Ch.2.cbz")
    scanner = scanner_for(root, tmp_path)
    assert scanner.scan().read == 2
    (root / ".store").mkdir()
    chapter.rename(root / ".store" / "Ch.1.cbz")  # the same size and time
    chapter.symlink_to(Path("..") / ".store" / "Ch.1.cbz")
    report = scanner.scan()
    assert (report.read, report.chapters, report.skipped) == (0, 2, [])


def test_a_full_rescan_looks_again_at_what_a_scan_of_some_names_changed(
    demo_root: Path, tmp_path: Path
) -> None:
    """A scan of some names changes the index under them: the next full scan compares them,
    even with the library back as the last full scan found it."""
    scanner = scanner_for(demo_root, tmp_path)
    first = scanner.scan()
    extra = demo_root / "Iron Garden" / "Iron Garden Ch.009 [Gearworks].cbz"
    cbz(extra)
    assert scanner.scan(only={"Iron Garden"}).added == 1
    extra.unlink()
    report = scanner.scan()
    assert (report.removed, report.chapters) == (1, first.chapters)
    assert scanner.scan().read == 0


def test_a_full_rescan_looks_again_at_what_a_stopped_scan_committed(
    demo_root: Path, tmp_path: Path
) -> None:
    """A scan stopped midway keeps the chapters it read, committed: the next scan compares
    their series again, even with the library back as the last finished scan found it."""
    scanner = scanner_for(demo_root, tmp_path)
    first = scanner.scan()
    added = [demo_root / "Iron Garden" / f"Iron Garden Ch.{n:03d} [Gearworks].cbz" for n in (9, 10)]
    for path in added:
        cbz(path)

    def stop_after_one(done: int, total: int) -> None:
        if done == 1:
            scanner.stop.set()

    with pytest.raises(ScanCancelled):
        scanner.scan(progress=stop_after_one)
    scanner.stop.clear()
    kept = {row[0] for row in scanner.index.reader().execute("SELECT relpath FROM chapters")}
    assert len(kept) == first.chapters + 1
    for path in added:
        path.unlink()
    report = scanner.scan()
    assert (report.removed, report.chapters) == (1, first.chapters)
    assert scanner.scan().read == 0


def test_a_series_that_comes_back_unchanged_is_read_again(tmp_path: Path) -> None:
    """A series gone from the folder is forgotten whole, what it was listed as included:
    brought back as it was, it is read afresh, not taken as already known."""
    root = tmp_path / "lib"
    cbz(root / "Good" / "Ch.1.cbz")
    (root / "Broken" / "Ch.1.cbz").parent.mkdir(parents=True)
    (root / "Broken" / "Ch.1.cbz").write_bytes(b"this is not a zip")
    scanner = scanner_for(root, tmp_path)
    assert "Broken/Ch.1.cbz" in reasons(scanner.scan().skipped)
    (root / "Broken").rename(tmp_path / "Broken")
    assert "Broken/Ch.1.cbz" not in reasons(scanner.scan().skipped)
    (tmp_path / "Broken").rename(root / "Broken")  # the same file, size and time
    report = scanner.scan()
    assert report.read == 1
    assert "Broken/Ch.1.cbz" in reasons(report.skipped)


def test_scoped_rescan_only_touches_named_entries(demo_root: Path, tmp_path: Path) -> None:
    scanner = scanner_for(demo_root, tmp_path)
    scanner.scan()
    cbz(demo_root / "Hoshi no Tabibito" / "Hoshi no Tabibito Ch.005 [Starlight Scans].cbz")
    cbz(demo_root / "Iron Garden" / "Iron Garden Ch.005 [Gearworks].cbz")
    report = scanner.scan(only={"Hoshi no Tabibito"})
    assert report.added == 1 and report.chapters == 24
    assert scanner.scan().added == 1  # the other one, on the next full scan


def test_slugs_stable_across_rescans_and_machines(demo_root: Path, tmp_path: Path) -> None:
    first = scanner_for(demo_root, tmp_path, "a.sqlite3")
    first.scan()
    before = slugs(first)
    first.scan()
    assert slugs(first) == before
    copy = tmp_path / "elsewhere"
    shutil.copytree(demo_root, copy)
    other = scanner_for(copy, tmp_path, "b.sqlite3")
    other.scan()
    assert slugs(other) == before
    assert all(slug and slug.replace("-", "").isalnum() for slug in before.values())


def test_slug_collisions(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    cbz(root / "Star!" / "c1.cbz")
    cbz(root / "Star?" / "c1.cbz")
    cbz(root / "Search" / "c1.cbz")
    cbz(root / "S" / "Ch.1 [G].cbz")
    cbz(root / "S" / "extra" / "Ch.1 [G].cbz")
    scanner = scanner_for(root, tmp_path)
    scanner.scan()
    current = slugs(scanner)
    star = current["Star?"]
    assert current["Star!"] == "star" and re.fullmatch(r"star-[0-9a-f]{6}", star)
    assert current["Search"] == "search-1"
    assert current["S/Ch.1 [G].cbz"] == "ch-1-g"
    assert re.fullmatch(r"ch-1-g-[0-9a-f]{6}", current["S/extra/Ch.1 [G].cbz"])
    # A later colliding folder, even one sorting first, leaves the existing slugs alone.
    cbz(root / "Star" / "c1.cbz")
    scanner.scan()
    again = slugs(scanner)
    assert again["Star!"] == "star" and again["Star?"] == star
    assert re.fullmatch(r"star-[0-9a-f]{6}", again["Star"]) and again["Star"] != star


def test_slugs_never_move_to_another_series(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    for name in ("Re Zero", "Re-Zero", "Re\uff1aZero"):
        cbz(root / name / "Ch.1.cbz")
    scanner = scanner_for(root, tmp_path)
    scanner.scan()
    before = slugs(scanner)
    assert before["Re Zero"] == "re-zero"
    assert len({before[n] for n in ("Re Zero", "Re-Zero", "Re\uff1aZero")}) == 3
    shutil.move(root / "Re Zero", tmp_path / "moved out")
    scanner.scan()
    after = slugs(scanner)
    assert "Re Zero" not in after
    assert after["Re-Zero"] == before["Re-Zero"] and after["Re\uff1aZero"] == before["Re\uff1aZero"]
    assert "re-zero" not in after.values()  # the saved slug answers for nobody else
    shutil.move(tmp_path / "moved out", root / "Re Zero")
    scanner.scan()
    assert slugs(scanner) == before


def test_bad_inputs_are_skipped_with_reasons(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    good = cbz(root / "Good" / "Ch.1.cbz")
    (root / "Good" / "corrupt.cbz").write_bytes(b"this is not a zip")
    truncated = good.read_bytes()
    (root / "Good" / "Ch.2 truncated.cbz").write_bytes(truncated[: len(truncated) // 2])
    cbz(root / "Good" / "Ch.3 no images.cbz", pages={"readme.txt": b"hi"})
    (root / "Good" / "notes.txt").write_text("notes")
    cbz(root / "Good" / "Ch.4 bad xml.cbz", info=b"<ComicInfo><Title>oops")
    cbz(
        root / "Good" / "Ch.5 hostile.cbz",
        info=b'<!DOCTYPE x [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;">]><ComicInfo><Title>&b;</Title></ComicInfo>',
    )
    cbz(
        root / "Good" / "Ch.6 traversal.cbz",
        pages={"../../escape.jpg": jpeg(), "/abs.jpg": jpeg(), "ok.jpg": jpeg()},
    )
    (root / "Good" / "Ch.8 broken.cb7").write_bytes(b"7z\xbc\xaf\x27\x1c broken")
    (root / "Good" / "Ch.9 broken.cbr").write_bytes(b"Rar!\x1a\x07\x00 broken")
    (root / "stray.jpg").write_bytes(jpeg())
    (root / "Empty").mkdir()
    outside = tmp_path / "outside"
    cbz(outside / "Secret" / "c1.cbz")
    os.symlink(outside / "Secret", root / "Linked Out")
    os.symlink(outside / "Secret" / "c1.cbz", root / "Good" / "Ch.7 link.cbz")
    os.symlink(root / "Good", root / "Good Again")  # inside the root: allowed

    scanner = scanner_for(root, tmp_path)
    report = scanner.scan()
    skipped = reasons(report.skipped)
    warnings = reasons(report.warnings)
    assert "not a readable zip" in skipped["Good/corrupt.cbz"]
    assert "Good/Ch.2 truncated.cbz" in skipped
    assert skipped["Good/Ch.3 no images.cbz"] == "contains no images"
    assert "7z" in skipped["Good/Ch.8 broken.cb7"]
    assert "Good/Ch.9 broken.cbr" in skipped
    assert "unsupported file type" in skipped["Good/notes.txt"]
    assert "library root" in skipped["stray.jpg"]
    assert skipped["Empty"] == "series folder has no chapters"
    assert "outside the library root" in skipped["Linked Out"]
    assert "outside the library root" in skipped["Good/Ch.7 link.cbz"]
    assert "malformed" in warnings["Good/Ch.4 bad xml.cbz"]
    assert "hostile" in warnings["Good/Ch.5 hostile.cbz"]
    assert "'..'" in warnings["Good/Ch.6 traversal.cbz"]
    # Usable chapters are kept, including those with bad metadata.
    relpaths = {row[0] for row in scanner.index.reader().execute("SELECT relpath FROM chapters")}
    assert {
        "Good/Ch.1.cbz",
        "Good/Ch.4 bad xml.cbz",
        "Good/Ch.5 hostile.cbz",
        "Good/Ch.6 traversal.cbz",
    } <= relpaths
    pages = (
        scanner.index.reader()
        .execute("SELECT pages FROM chapters WHERE relpath = 'Good/Ch.6 traversal.cbz'")
        .fetchone()[0]
    )
    assert pages == '["ok.jpg"]'
    assert "Secret" not in " ".join(relpaths)
    assert "Skipped" in report.summary()

    # Broken files are not re-opened when unchanged.
    again = scanner.scan()
    assert again.read == 0
    assert reasons(again.skipped) == skipped


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_unreadable_file(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    locked = cbz(root / "S" / "Ch.1.cbz")
    cbz(root / "S" / "Ch.2.cbz")
    locked.chmod(0)
    try:
        report = scanner_for(root, tmp_path).scan()
    finally:
        locked.chmod(0o644)
    assert "S/Ch.1.cbz" in reasons(report.skipped)


def test_zip_symlink_entries_are_ignored(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    path = root / "S" / "Ch.1.cbz"
    path.parent.mkdir(parents=True)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("1.jpg", jpeg())
        link = zipfile.ZipInfo("2.jpg")
        link.external_attr = 0o120777 << 16
        archive.writestr(link, "/etc/passwd")
    scanner = scanner_for(root, tmp_path)
    report = scanner.scan()
    assert report.chapters == 1
    pages = scanner.index.reader().execute("SELECT pages FROM chapters").fetchone()[0]
    assert pages == '["1.jpg"]'


def test_archive_formats_and_root_level_oneshot(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    (root / "Formats").mkdir(parents=True)
    with py7zr.SevenZipFile(root / "Formats" / "Ch.1.cb7", "w") as archive:
        archive.writestr(jpeg(), "10.jpg")
        archive.writestr(png(), "2.png")
        archive.writestr(comicinfo(Title="Seven"), "ComicInfo.xml")
    (root / "Formats" / "Ch.2.cbr").write_bytes(
        rar4({"1.jpg": jpeg(), "ComicInfo.xml": comicinfo(Title="Rar Title")})
    )
    (root / "Formats" / "Ch.3").mkdir()
    for name in ("10.webp", "2.gif", "1.avif"):
        (root / "Formats" / "Ch.3" / name).write_bytes(b"x")
    cbz(root / "Lonely Oneshot [Solo].cbz")
    scanner = scanner_for(root, tmp_path)
    report = scanner.scan()
    assert report.skipped == []
    rows = {
        row["relpath"]: row
        for row in scanner.index.reader().execute(
            "SELECT relpath, title, pages, kind FROM chapters"
        )
    }
    assert rows["Formats/Ch.1.cb7"]["pages"] == '["2.png", "10.jpg"]'
    assert rows["Formats/Ch.1.cb7"]["title"] == "Seven"
    assert rows["Formats/Ch.2.cbr"]["title"] == "Rar Title"
    assert rows["Formats/Ch.3"]["pages"] == '["1.avif", "2.gif", "10.webp"]'
    series = {
        row[0]: row[1] for row in scanner.index.reader().execute("SELECT slug, title FROM series")
    }
    assert series["lonely-oneshot"] == "Lonely Oneshot"  # its name, "Oneshot" and all
    assert rows["Lonely Oneshot [Solo].cbz"]["title"] == "Oneshot"


@pytest.mark.skipif(rar_tool() is not None, reason="a RAR tool is installed here")
def test_compressed_rar_without_tool_is_skipped_naming_the_tools(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    (root / "S").mkdir(parents=True)
    (root / "S" / "Ch.1.cbr").write_bytes(rar4({"1.jpg": jpeg()}, compressed=True))
    report = scanner_for(root, tmp_path).scan()
    reason = reasons(report.skipped)["S/Ch.1.cbr"]
    assert "unrar" in reason and "bsdtar" in reason


def test_missing_root_raises(tmp_path: Path) -> None:
    with pytest.raises(LibraryUnavailable):
        scanner_for(tmp_path / "nope", tmp_path).scan()


def test_progress_callback(demo_root: Path, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    scanner_for(demo_root, tmp_path).scan(progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 23) and seen[-1] == (23, 23)


def index_rows(scanner: Scanner) -> list[tuple[object, ...]]:
    """Everything a reader sees of the index, without the times a scan records."""
    db = scanner.index.reader()
    chapters = db.execute(
        "SELECT s.slug, c.relpath, c.slug, c.kind, c.number, c.volume, c.title, c.language, "
        "c.scanlator, c.pages, c.info FROM chapters c JOIN series s ON s.id = c.series_id "
        "ORDER BY c.relpath"
    )
    series = db.execute(
        "SELECT relpath, slug, title, alt_titles, writers, genres, tags, chapter_count, "
        "cover_relpath, cover_member FROM series ORDER BY relpath"
    )
    return [tuple(row) for row in [*chapters, *series]]


def test_a_large_scan_reads_in_worker_processes_to_the_same_index(
    demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toshokan.sources.local import scanner as scanner_module

    monkeypatch.setattr(scanner_module, "PARALLEL_FROM", 1)
    monkeypatch.setattr(scanner_module, "BATCH_SIZE", 3)
    monkeypatch.setattr(scanner_module, "READ_HERE_FIRST", 2)
    (demo_root / "Broken").mkdir()
    (demo_root / "Broken" / "Ch.1.cbz").write_bytes(b"not a zip")
    in_processes = Scanner(demo_root, Index(tmp_path / "a.sqlite3"), workers=2)
    in_thread = Scanner(demo_root, Index(tmp_path / "b.sqlite3"), workers=0)
    report = in_processes.scan()
    assert report.chapters == 23 and report.read == 24
    assert report.skipped == in_thread.scan().skipped != []
    assert index_rows(in_processes) == index_rows(in_thread)


def test_reading_processes_import_nothing_from_the_working_directory(
    demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scan started in a folder holding a zipfile.py (a library's, say) reads with the
    standard zipfile, not that file."""
    from toshokan.sources.local import scanner as scanner_module

    monkeypatch.setattr(scanner_module, "PARALLEL_FROM", 1)
    monkeypatch.setattr(scanner_module, "READ_HERE_FIRST", 0)
    imported, here = tmp_path / "imported", tmp_path / "here"
    here.mkdir()
    (here / "zipfile.py").write_text(f"open({str(imported)!r}, 'w').close()\n")
    monkeypatch.chdir(here)
    in_processes = Scanner(demo_root, Index(tmp_path / "a.sqlite3"), workers=2)
    in_thread = Scanner(demo_root, Index(tmp_path / "b.sqlite3"), workers=0)
    assert in_processes.scan() == in_thread.scan()
    assert not imported.exists()


def test_a_chapter_found_reaches_a_reading_process_whole() -> None:
    """Sent over the pipe as the call that makes it: every field arrives."""
    chapter = FoundChapter("Series/Ch.1.cbz", "zip", "[1, 2]", 1.5)
    assert pickle.loads(pickle.dumps(chapter, pickle.HIGHEST_PROTOCOL)) == chapter


def test_a_first_scan_whose_walk_differs_from_what_it_reads_reads_the_rest_right(
    demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The index holds no chapter but remembers a broken file as skipped: the walk sends it
    # to the reading processes with the rest, the scan does not read it again, so what was
    # sent while walking is not what is read.
    from toshokan.sources.local import scanner as scanner_module

    monkeypatch.setattr(scanner_module, "PARALLEL_FROM", 1)
    monkeypatch.setattr(scanner_module, "BATCH_SIZE", 3)
    library = tmp_path / "library"
    (library / "AAA Broken").mkdir(parents=True)
    (library / "AAA Broken" / "Ch.1.cbz").write_bytes(b"not a zip")
    in_processes = Scanner(library, Index(tmp_path / "a.sqlite3"), workers=2)
    in_thread = Scanner(library, Index(tmp_path / "b.sqlite3"), workers=0)
    assert in_processes.scan().skipped == in_thread.scan().skipped != []
    shutil.copytree(demo_root, library, dirs_exist_ok=True)
    report = in_processes.scan()
    assert report.read == report.chapters == 23
    assert report.skipped == in_thread.scan().skipped
    assert index_rows(in_processes) == index_rows(in_thread)


def test_volume_folders_inside_a_series_number_their_chapters(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    cbz(root / "Berserk" / "Vol 01" / "Ch 1.cbz")
    cbz(root / "Berserk" / "Vol 02" / "Ch 9.cbz")
    cbz(root / "Berserk" / "Volume 03 (2003)" / "Chapter 17 - Lost Children.cbz")
    scanner = scanner_for(root, tmp_path)
    scanner.scan()
    db = scanner.index.reader()
    assert [row[0] for row in db.execute("SELECT relpath FROM series")] == ["Berserk"]
    rows = db.execute("SELECT number, volume, title FROM chapters ORDER BY number").fetchall()
    assert [tuple(row) for row in rows] == [
        # The folder's volume is the chapter's, not part of a title shown after its number.
        (1.0, 1.0, "Chapter 1"),
        (9.0, 2.0, "Chapter 9"),
        (17.0, 3.0, "Lost Children"),
    ]
