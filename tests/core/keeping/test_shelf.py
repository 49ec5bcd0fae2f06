"""The keep folder's writer: a chapter appears whole, pages byte for byte and in order, or not
at all, whatever happens to the process, the disk or the pages."""

import asyncio
import contextlib
import io
import os
import resource
import signal
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from tests.core.keeping.pages import BOUNDS, arriving, noisy_page, page, write
from toshokan.core.keeping import BadImage, Bounds, NoSpace, NotWritable, Shelf, TooLarge
from toshokan.core.keeping.shelf import DRAFTS
from toshokan.sdk import partial_md5

pytestmark = pytest.mark.anyio
WRITER = [sys.executable, "-m", "tests.core.keeping.pages"]
ROOT = Path(__file__).resolve().parents[3]


def files_in(folder: Path) -> list[str]:
    """Every file under ``folder`` the library would see (the drafts' dot-folder aside)."""
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and DRAFTS not in p.relative_to(folder).parts
    )


async def test_a_chapter_holds_each_page_as_sent_in_reading_order(tmp_path: Path) -> None:
    pages = [page(n, kind) for n, kind in enumerate(["PNG", "JPEG", "WEBP", "GIF"] * 3, 1)]
    path = await write(tmp_path, pages)
    assert path == tmp_path / "Series" / "Series Ch.1.cbz"
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        assert names[-1] == "ComicInfo.xml"
        images = names[:-1]
        assert (
            images
            == sorted(images)
            == [f"{n:03d}{ext}" for n, ext in enumerate([".png", ".jpg", ".webp", ".gif"] * 3, 1)]
        )
        assert [archive.read(name) for name in images] == pages
    assert files_in(tmp_path) == ["Series/Series Ch.1.cbz"]
    assert not list((tmp_path / DRAFTS).iterdir())  # nothing left aside


async def test_page_names_sort_past_a_thousand_pages(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path, BOUNDS)
    async with shelf.draft() as draft:
        one = page(1)
        for _ in range(1001):
            await draft.add_page(arriving(one))
        names = [p.name for p in draft.named_pages()]
    assert names[0] == "0001.png" and names[-1] == "1001.png" and names == sorted(names)


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"<html>Cloudflare says no</html>", "not a readable image"),
        (page(1, "JPEG")[:-200], "not a readable image"),  # truncated on the way
        (b"", "came empty"),
    ],
)
async def test_a_page_that_is_not_a_whole_image_fails_the_chapter(
    tmp_path: Path, data: bytes, why: str
) -> None:
    with pytest.raises(BadImage, match=why):
        await write(tmp_path, [page(1), data, page(3)])
    assert files_in(tmp_path) == []


async def test_pages_and_chapters_over_their_bounds_are_refused_as_they_arrive(
    tmp_path: Path,
) -> None:
    small = Bounds(image_bytes=20_000, chapter_bytes=5 * 1024 * 1024, image_pixels=1_000_000)
    shelf = Shelf(tmp_path, small)
    async with shelf.draft() as draft:
        with pytest.raises(BadImage, match="larger than"):
            await draft.add_page(arriving(noisy_page(1, 100)))  # 30 kB
        with pytest.raises(BadImage, match="pixels"):
            await draft.add_page(arriving(page(1, "PNG", (1001, 1000))))
    tight = Bounds(image_bytes=2 * 1024 * 1024, chapter_bytes=1024 * 1024, image_pixels=10**7)
    async with Shelf(tmp_path, tight).draft() as draft:
        await draft.add_page(arriving(noisy_page(1, 400)))  # 480 kB
        with pytest.raises(TooLarge):
            await draft.add_page(arriving(noisy_page(2, 400)))
            await draft.add_page(arriving(noisy_page(3, 400)))
    assert files_in(tmp_path) == []


async def test_writing_again_replaces_the_chapter_and_leaves_no_copy(tmp_path: Path) -> None:
    first = await write(tmp_path, [page(1), page(2)])
    again = await write(tmp_path, [page(1), page(2), page(3)])
    assert first == again
    assert files_in(tmp_path) == ["Series/Series Ch.1.cbz"]
    with zipfile.ZipFile(again) as archive:
        assert len(archive.namelist()) == 4


async def test_the_staged_file_is_the_file_kept(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path, BOUNDS)
    async with shelf.draft() as draft:
        await draft.add_page(arriving(page(1)))
        staged = await draft.assemble(b"<ComicInfo/>")
        kept = await draft.publish(staged, "S/S Ch.1.cbz")
    assert staged.document == partial_md5(str(kept))  # what KOReader will call it
    assert staged.size == kept.stat().st_size and staged.pages == 1


def test_a_process_killed_mid_chapter_leaves_nothing_and_the_chapter_restarts(
    tmp_path: Path,
) -> None:
    writer = subprocess.Popen(
        [*WRITER, str(tmp_path), "40", "0.05"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    for _ in range(10):
        assert writer.stdout.readline().startswith("page ")
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    assert files_in(tmp_path) == []  # no partial file where the library looks
    assert len(list((tmp_path / DRAFTS).iterdir())) == 1  # its draft, aside
    assert Shelf(tmp_path, BOUNDS).clean() == 1  # the next host removes it
    again = subprocess.run(
        [*WRITER, str(tmp_path), "40", "0"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert again.stdout.splitlines()[-1] == f"kept {tmp_path / 'Series' / 'Series Ch.1.cbz'}"
    assert files_in(tmp_path) == ["Series/Series Ch.1.cbz"]
    assert not list((tmp_path / DRAFTS).iterdir())


def test_a_live_writer_draft_is_not_cleaned_away(tmp_path: Path) -> None:
    writer = subprocess.Popen(
        [*WRITER, str(tmp_path), "20", "0.1"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().startswith("page ")
    assert Shelf(tmp_path, BOUNDS).clean() == 0  # another process (replica) is writing it
    output = writer.communicate(timeout=60)[0]
    assert output.splitlines()[-1].startswith("kept ")


def test_a_file_size_limit_is_no_space_and_touches_nothing_kept(tmp_path: Path) -> None:
    asyncio.run(write(tmp_path, [page(1)], relative="Kept/Kept Ch.1.cbz"))
    before = (tmp_path / "Kept" / "Kept Ch.1.cbz").read_bytes()

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (2 * 1024 * 1024, 2 * 1024 * 1024))

    # Pages of 1.5 MB each: the chapter's archive passes the limit while it is put together.
    result = subprocess.run(
        [*WRITER, str(tmp_path), "3", "0", "noisy"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        preexec_fn=limited,
        check=True,
    )
    assert result.stdout.splitlines()[-1].startswith("refused no-space: the keep folder is full")
    assert files_in(tmp_path) == ["Kept/Kept Ch.1.cbz"]
    assert (tmp_path / "Kept" / "Kept Ch.1.cbz").read_bytes() == before


@contextlib.contextmanager
def mounted(folder: Path, options: str) -> Iterator[Path]:
    """A small tmpfs at ``folder`` (root only, where mounting is allowed)."""
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True
    )
    if done.returncode:
        pytest.skip(f"no tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


async def test_a_full_disk_is_no_space_and_touches_nothing_kept(tmp_path: Path) -> None:
    with mounted(tmp_path / "disk", "size=3m") as disk:
        kept = await write(disk, [page(1)], relative="Kept/Kept Ch.1.cbz")
        before = kept.read_bytes()
        with pytest.raises(NoSpace, match="full"):
            await write(disk, [noisy_page(n) for n in range(1, 4)])
        assert files_in(disk) == ["Kept/Kept Ch.1.cbz"]
        assert kept.read_bytes() == before
        assert not list((disk / DRAFTS).iterdir())  # the space is given back
        await write(disk, [page(2)])  # and the next chapter fits
        assert files_in(disk) == ["Kept/Kept Ch.1.cbz", "Series/Series Ch.1.cbz"]


async def test_a_read_only_folder_is_not_writable_and_touches_nothing_kept(tmp_path: Path) -> None:
    with mounted(tmp_path / "disk", "size=3m") as disk:
        kept = await write(disk, [page(1)], relative="Kept/Kept Ch.1.cbz")
        await asyncio.to_thread(
            subprocess.run, ["mount", "-o", "remount,ro", str(disk)], check=True
        )
        with pytest.raises(NotWritable, match="cannot be written"):
            await write(disk, [page(2)])
        assert files_in(disk) == ["Kept/Kept Ch.1.cbz"]
        assert Image.open(io.BytesIO(zipfile.ZipFile(kept).read("001.png"))).size == (64, 96)
