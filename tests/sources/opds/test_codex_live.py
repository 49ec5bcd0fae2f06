"""A real Codex from PyPI, started by the test, searched and read to its last page.

Skipped where Codex is not installed (see ``codex_server``), and failed then in
CI (see ``live``); the fake in ``fakes.Codex`` reproduces its deviations and
always runs.
"""

import logging
from pathlib import Path

import pytest

from tests.sources.opds.codex_server import codex_executable, codex_server
from tests.sources.opds.helpers import get_json, pixel, read_all_pages, search
from tests.sources.opds.live import need
from toshokan.sources.opds import Opds
from toshokan.testing import serve

pytestmark = pytest.mark.anyio


async def test_a_real_codex_is_read_to_the_last_page(tmp_path: Path, caplog):
    executable = codex_executable()
    need(None if executable else "Codex is not installed (pip install codex in .venv-codex)")
    assert executable is not None
    caplog.set_level(logging.WARNING, logger="toshokan.sources.opds")
    with codex_server(tmp_path / "codex", executable) as root:
        async with serve(
            Opds, {"url": root, "name": "Codex"}, slug="shelf", data_dir=tmp_path / "host"
        ) as host:
            config = await get_json(host, "/shelf")
            found = await search(host, query="red")
            browsed = await search(host)
            slug = browsed["results"][0]["slug"]
            chapters = await get_json(host, f"/shelf/{slug}/chapters")
            pages = await read_all_pages(host, slug, chapters[-1]["slug"])
    assert "title" in config["search"]["sort"]
    assert [r["title"] for r in found["results"]] == ["Red Mountain #1", "Red Mountain #2"]
    assert [r["title"] for r in browsed["results"]] == ["Red Mountain"]
    assert [c["number"] for c in chapters] == [2, 1]
    assert chapters[0]["date"].startswith("2024-01-01")
    assert len(pages) == 3 and [pixel(p)[0] for p in pages] == [11, 12, 13]
    warned = caplog.text
    # (Codex's 406 answers an Accept of Atom alone; the adapter's Accept lists */* too.)
    for deviation in ("application/xml", "no Atom namespace", "bare '&'", "as feed entries"):
        assert deviation in warned, deviation
