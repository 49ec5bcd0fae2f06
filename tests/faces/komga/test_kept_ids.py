"""Ids the apps keep resolve to what they named, through the faces; forged ones are not found
and never reach the upstream.

The ids are spelled here by the rule they were handed out under (Komga's: the slugs joined
by ``/`` in base64url, unpadded; the Alethia app's chapter keys: ``<length>_<manga>_<chapter>``),
not by the host's own functions, so a host that stopped reading them fails."""

import base64

import pytest

from tests.sources.mangadex.fake import FakeMangaDex
from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio


def komga_form(*slugs: str) -> str:
    return base64.urlsafe_b64encode("/".join(slugs).encode()).decode().rstrip("=")


async def test_stored_ids_name_the_same_series_and_chapters(
    mangadex_host: ServedHost, mangadex_fake: FakeMangaDex
) -> None:
    manga = next(m for m in mangadex_fake.manga.values() if m.title["en"] == "Pirate Voyage")
    chapter = next(c for c in mangadex_fake.chapters.values() if c.chapter == "2")
    client = mangadex_host.client

    series = await client.get(f"/_/komga/api/v1/series/{komga_form('mangadex', manga.id)}")
    assert series.status_code == 200 and series.json()["name"] == "Pirate Voyage"
    book_id = komga_form("mangadex", manga.id, chapter.id)
    book = await client.get(f"/_/komga/api/v1/books/{book_id}")
    assert book.status_code == 200
    assert book.json()["seriesId"] == series.json()["id"] and book.json()["number"] == 2

    key = f"{len(manga.id)}_{manga.id}_{chapter.id}"
    pages = await client.get(f"/_/alethia/mangadex/42/chapters/{key}")
    assert pages.status_code == 200
    komga_pages = await client.get(f"/_/komga/api/v1/books/{book_id}/pages")
    assert len(pages.json()) == len(komga_pages.json()) > 0


async def test_forged_ids_never_reach_the_upstream(
    mangadex_host: ServedHost, mangadex_fake: FakeMangaDex
) -> None:
    manga = next(iter(mangadex_fake.manga.values()))
    chapter = next(iter(mangadex_fake.chapters.values()))
    client = mangadex_host.client
    asked = len(mangadex_fake.requests)
    for path in (
        f"/_/komga/api/v1/series/{komga_form('mangadex', manga.id.upper())}",
        f"/_/komga/api/v1/series/{komga_form('mangadex', manga.id, chapter.id)}",
        f"/_/komga/api/v1/books/{komga_form('mangadex', manga.id)}",
        f"/_/komga/api/v1/books/{komga_form('mangadex', manga.id, chapter.id + '/x')}",
        f"/_/komga/api/v1/books/{komga_form('mangadex', manga.id, chapter.id)}x=/pages",
    ):
        assert (await client.get(path)).status_code == 404, path
    for key in (f"{len(manga.id) + 1}_{manga.id}_{chapter.id}", f"0_{manga.id}", chapter.id):
        answer = await client.get(f"/_/alethia/mangadex/42/chapters/{key}")
        assert answer.status_code == 404
        assert answer.json()["error"]["code"] == "CHAPTER_NOT_FOUND"
    assert len(mangadex_fake.requests) == asked
