"""Reaching a page in a solid 7z block decompresses the block's prefix a chunk at a
time: the prefix never sits in memory whole (issue 13, point 2)."""

import tracemalloc
from pathlib import Path

from toshokan.sdk.archives import SevenZipReader

from .archive_files import jpeg, seven_zip


def test_a_page_behind_a_large_solid_prefix_costs_little_memory(tmp_path: Path) -> None:
    page = jpeg()
    path = seven_zip(tmp_path / "s.cb7", {"1.jpg": page + bytes(48 * 2**20), "2.jpg": page})
    with SevenZipReader(path) as reader:
        tracemalloc.start()
        try:
            data = reader.read("2.jpg", 10**6)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert data == page
    assert peak < 32 * 2**20  # about 20 MiB, whatever the prefix; 120 MiB when taken whole
