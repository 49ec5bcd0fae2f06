"""A library's page is read straight from its archive: one look at the chapter in the index,
never a page URL built only to be taken apart again (``Source.own_pages``)."""

import io

import pytest
from PIL import Image

from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio
KOMGA = "/_/komga/api/v1"


async def test_a_page_and_then_a_thumbnail_read_their_chapter_once(
    local_host: ServedHost, chapter_reads: list[tuple[str, str]]
) -> None:
    client = local_host.client
    series = (await client.get(f"{KOMGA}/series?search=")).json()["content"]
    book = (await client.get(f"{KOMGA}/series/{series[0]['id']}/books")).json()["content"][0]
    count = (await client.get(f"{KOMGA}/books/{book['id']}")).json()["media"]["pagesCount"]
    looks = []
    for path in (f"/books/{book['id']}/pages/{count}", f"/books/{book['id']}/thumbnail"):
        chapter_reads.clear()
        answer = await client.get(KOMGA + path)
        assert answer.status_code == 200, path
        Image.open(io.BytesIO(answer.content)).verify()
        looks.append(len(chapter_reads))
    assert looks == [1, 0]  # once for the page; its chapter's pages are remembered a while
    past = await client.get(f"{KOMGA}/books/{book['id']}/pages/{count + 1}")
    assert past.status_code == 404
    assert past.json()["message"] == f"This book has pages 1 to {count}."
