"""KOReader's document ids: the host's partial MD5 against KOReader's, and the index keeping them."""

import random
import sqlite3
from pathlib import Path

import pytest

from toshokan.sdk import partial_md5
from toshokan.sdk.digests import partial_md5_of_bytes
from toshokan.sources.local.index import Index
from toshokan.sources.local.scanner import Scanner

from .koreader import koreader_partial_md5

pytestmark = pytest.mark.anyio

#: Around each sample's edge, and files past the 4 MiB and 16 MiB samples.
SIZES = [
    0,
    1,
    1023,
    1024,
    1025,
    4096,
    5000,
    16 * 1024 + 7,
    300_000,
    4 * 1024 * 1024 + 512,
    17_000_000,
]


@pytest.mark.parametrize("size", SIZES)
def test_the_host_names_files_as_koreader_does(tmp_path: Path, size: int) -> None:
    data = random.Random(size).randbytes(size)
    path = tmp_path / "book.cbz"
    path.write_bytes(data)
    assert partial_md5(path) == partial_md5_of_bytes(data) == koreader_partial_md5(data)


def test_appending_past_the_last_sample_keeps_the_id(tmp_path: Path) -> None:
    """Why KOReader samples: a PDF it annotates by appending keeps its id."""
    path = tmp_path / "book.pdf"
    path.write_bytes(random.Random(1).randbytes(300_000))
    before = partial_md5(path)
    with path.open("ab") as stream:
        stream.write(b"%% KOReader's annotations\n")
    assert partial_md5(path) == before


def test_an_index_from_before_keeps_its_rows_and_gains_the_ids(
    library: Path, tmp_path: Path
) -> None:
    path = tmp_path / "index.sqlite3"
    Scanner(library, Index(path), workers=1).scan()
    # The index as the previous version left it: no id column, schema 6.
    with sqlite3.connect(path) as db:
        db.execute("DROP INDEX chapters_partial_md5")
        db.execute("DROP INDEX chapters_unnamed")
        db.execute("ALTER TABLE chapters DROP COLUMN partial_md5")
        db.execute("UPDATE meta SET value = '6' WHERE key = 'schema'")
        before = db.execute("SELECT relpath, first_seen FROM chapters ORDER BY relpath").fetchall()
    index = Index(path)
    scanner = Scanner(library, index, workers=1)
    report = scanner.scan()
    # Migrated, not dropped: every row kept (read again once for what the index did not
    # keep before, such as ComicInfo's reading direction).
    assert report.added == report.removed == 0
    with sqlite3.connect(path) as db:
        after = db.execute("SELECT relpath, first_seen FROM chapters ORDER BY relpath").fetchall()
        ids = dict(db.execute("SELECT relpath, partial_md5 FROM chapters").fetchall())
    assert after == before
    for relpath, digest in ids.items():
        assert digest == koreader_partial_md5((library / relpath).read_bytes())
        assert index.chapter_of_file(digest) is not None
