"""A library's page is read straight from its archive: one look at the chapter in the index,
never a page URL built only to be taken apart again (``Source.own_pages``)."""

import io

import pytest
from PIL import Image

from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio


async def test_an_opds_page_reads_its_chapter_once(
    local_host: ServedHost, chapter_reads: list[tuple[str, str]]
) -> None:
    client = local_host.client
    found = await client.post("/local/search", json={"page": 1, "sort": "title"})
    manga = found.json()["results"][0]["slug"]
    chapter = (await client.get(f"/local/{manga}/chapters")).json()[0]["slug"]
    chapter_reads.clear()
    answer = await client.get(f"/_/opds/local/series/{manga}/{chapter}/pages/0?maxWidth=200")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "image/jpeg"
    assert Image.open(io.BytesIO(answer.content)).width <= 200
    assert chapter_reads == [(manga, chapter)]
    following = await client.get(f"/_/opds/local/series/{manga}/{chapter}/pages/1")
    assert following.status_code == 200
    assert chapter_reads == [(manga, chapter)]  # its pages remembered: no second look
