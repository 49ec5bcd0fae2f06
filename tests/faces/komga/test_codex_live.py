"""A real Codex from PyPI behind the OPDS adapter, read through the Komga face as Mihon reads it.

Skipped where Codex is not installed, and failed then in CI (``tests/opds_adapter/live.py``);
the fake catalogue in ``test_every_source.py`` always runs.
"""

from pathlib import Path

import pytest

from tests.faces.komga.clients.mihon_extension import SearchFilters, Sort
from tests.sources.opds.codex_server import codex_executable, codex_server
from tests.sources.opds.live import need
from toshokan.sources.opds import Opds
from toshokan.testing import serve

from .helpers import mihon

pytestmark = pytest.mark.anyio


async def test_a_real_codex_is_read_through_the_komga_face(tmp_path: Path) -> None:
    executable = codex_executable()
    need(None if executable else "Codex is not installed (pip install codex in .venv-codex)")
    assert executable is not None
    with codex_server(tmp_path / "codex", executable) as root:
        async with serve(
            Opds, {"url": root, "name": "Codex"}, slug="shelf", data_dir=tmp_path / "host"
        ) as host:
            _, source = mihon(host)
            browsed = await source.search(1, "", SearchFilters(sort=Sort(1, True)))
            chapters = await source.chapter_list(browsed.mangas[0].url)
            pages = await source.page_list(chapters[-1].url)
            images = [await source.page_image(page.image_url) for page in pages]
    assert [manga.title for manga in browsed.mangas] == ["Red Mountain"]
    assert [chapter.chapter_number for chapter in chapters] == [2.0, 1.0]
    assert len(images) == 3 and all(image.status_code == 200 for image in images)
