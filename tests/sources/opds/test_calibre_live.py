"""A real calibre-server (Debian's ``calibre``), started by the test, read to its last page.

Skipped where calibre is not installed, and failed then in CI (see ``live``);
the fake in ``fakes.Calibre`` follows the same output and always runs.
"""

from pathlib import Path

import pytest

from tests.sources.opds.calibre_server import available, calibre_server
from tests.sources.opds.helpers import get_json, pixel, read_all_pages, search
from tests.sources.opds.live import need
from toshokan.sources.opds import Opds
from toshokan.testing import serve

pytestmark = pytest.mark.anyio


async def test_a_real_calibre_library_is_read_to_the_last_page(tmp_path: Path):
    need(None if available() else "calibre-server is not installed (apt-get install calibre)")
    with calibre_server(tmp_path / "calibre") as root:
        settings = {"url": root, "name": "Calibre"}
        async with serve(Opds, settings, slug="shelf", data_dir=tmp_path / "host") as host:
            config = await get_json(host, "/shelf")
            found = await search(host, query="Star Atlas")
            assert [r["title"] for r in found["results"]] == ["Star Atlas"]
            slug = found["results"][0]["slug"]
            details = await get_json(host, f"/shelf/{slug}")
            chapters = await get_json(host, f"/shelf/{slug}/chapters")
            pages = await read_all_pages(host, slug, chapters[0]["slug"])
            browsed = await search(host, limit=100)
    assert config["presets"], "calibre's navigation root gives presets"
    assert details["authors"] == ["Bo Pen"]
    assert len(chapters) == 1
    assert [pixel(page)[0] for page in pages] == [21, 22, 23, 24]
    assert {r["title"] for r in browsed["results"]} >= {"Moon Letters", "Star Atlas", "Sun Diary"}
