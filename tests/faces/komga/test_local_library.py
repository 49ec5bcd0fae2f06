"""The local library through Mihon's Komga extension: every answer decoded as the extension does."""

import io
from typing import Any

import pytest
from PIL import Image

from tests.faces.komga.clients.mihon_extension import SearchFilters, Sort
from tests.faces.komga.clients.mihon_extension_models import (
    ONGOING,
    PageWrapperDto,
    SeriesDto,
    parse_date_time_strict,
)
from toshokan.sources.local.demo import ARCHETYPES
from toshokan.testing import ServedHost

from .helpers import SERVER, mihon

pytestmark = pytest.mark.anyio


async def spec_chapters(host: ServedHost, title: str) -> list[dict[str, Any]]:
    """The chapters the spec's interface lists for the work titled ``title``."""
    found = await host.client.post(
        "/local/search", json={"page": 1, "sort": "title", "query": title}
    )
    slug = found.json()["results"][0]["slug"]
    chapters: list[dict[str, Any]] = (await host.client.get(f"/local/{slug}/chapters")).json()
    return chapters


async def test_the_filter_sheet_loads_libraries_and_lists(local_host: ServedHost) -> None:
    _, source = mihon(local_host)
    options = await source.filter_lists()
    assert [(library.id, library.name) for library in options.libraries] == [
        ("local", "Local Library")
    ]
    titles = {manga.title for manga in (await source.popular(1)).mangas}
    shown = [arch for arch in ARCHETYPES if arch.title in titles]
    assert len(shown) == len(titles) == 3
    assert options.publishers == {arch.publisher for arch in shown if arch.publisher}
    assert list(options.authors) == ["writer"]
    assert {author.name for author in options.authors["writer"]} == {
        a.writer for a in shown if a.writer
    }


async def test_a_publisher_and_an_author_picked_from_the_lists(local_host: ServedHost) -> None:
    _, source = mihon(local_host)
    options = await source.filter_lists()
    for arch in ARCHETYPES:
        if arch.publisher in options.publishers:
            break
    by_publisher = await source.search(1, "", SearchFilters(publishers=(arch.publisher,)))
    assert [manga.title for manga in by_publisher.mangas] == [arch.title]
    writer = next(a for a in options.authors["writer"] if a.name == arch.writer)
    by_author = await source.search(1, "", SearchFilters(authors=((writer.name, writer.role),)))
    assert [manga.title for manga in by_author.mangas] == [arch.title]


async def test_popular_lists_every_series_by_title(local_host: ServedHost) -> None:
    _, source = mihon(local_host)
    page = await source.popular(1)
    titles = [manga.title for manga in page.mangas]
    assert titles == sorted(titles) and len(titles) == 3
    assert not page.has_next_page
    first = page.mangas[0]
    assert first.url.startswith(f"{SERVER}/api/v1/series/")
    assert first.status == ONGOING  # a work of unknown status is Komga's default


async def test_series_pages_come_in_komgas_page_sizes(local_host: ServedHost) -> None:
    answer = await local_host.client.get("/_/komga/api/v1/series?search=&page=0&size=2")
    page = PageWrapperDto[SeriesDto].decode(answer.content)
    assert (page.number, page.size, page.numberOfElements, page.first, page.last) == (
        0,
        2,
        2,
        True,
        False,
    )
    answer = await local_host.client.get("/_/komga/api/v1/series?search=&page=1&size=2")
    page = PageWrapperDto[SeriesDto].decode(answer.content)
    assert (page.numberOfElements, page.last, page.totalElements) == (1, True, 3)


async def test_a_series_its_chapters_and_their_pages(local_host: ServedHost) -> None:
    _, source = mihon(local_host)
    listed = (await source.popular(1)).mangas[0]
    details = await source.manga_details(listed.url)
    assert details.title == listed.title
    chapters = await source.chapter_list(listed.url)
    spec = await spec_chapters(local_host, listed.title)
    assert sorted(chapter.chapter_number for chapter in chapters) == sorted(
        float(c["number"]) for c in spec
    )
    assert [c.chapter_number for c in chapters] == sorted(
        (c.chapter_number for c in chapters), reverse=True
    )
    assert all(chapter.date_upload > 0 for chapter in chapters)
    pages = await source.page_list(chapters[-1].url)
    assert [page.index for page in pages] == [1, 2, 3]
    assert pages[0].image_url == f"{chapters[-1].url}/pages/1"
    image = await source.page_image(pages[0].image_url)
    assert image.header("content-type") == "image/jpeg"
    assert Image.open(io.BytesIO(image.content)).format == "JPEG"


async def test_a_page_converted_to_png_when_asked(local_host: ServedHost) -> None:
    _, source = mihon(local_host)
    listed = (await source.popular(1)).mangas[0]
    chapters = await source.chapter_list(listed.url)
    pages = await source.page_list(chapters[0].url)
    image = await source.page_image(pages[0].image_url + "?convert=png")
    assert image.header("content-type") == "image/png"
    assert Image.open(io.BytesIO(image.content)).format == "PNG"


async def test_search_finds_a_title(local_host: ServedHost) -> None:
    _, source = mihon(local_host)
    every = (await source.popular(1)).mangas
    wanted = every[1].title
    found = await source.search(1, wanted, SearchFilters(sort=Sort(0, True)))
    assert [manga.title for manga in found.mangas] == [wanted]


async def test_series_dates_are_komgas(local_host: ServedHost) -> None:
    answer = await local_host.client.get("/_/komga/api/v1/series?search=")
    listed = answer.json()["content"][0]
    series = (await local_host.client.get(f"/_/komga/api/v1/series/{listed['id']}")).json()
    for text in (series["created"], series["lastModified"], series["metadata"]["created"]):
        assert len(text) == len("2024-01-01T00:00:00Z") and text.endswith("Z")
        assert parse_date_time_strict(text) > 0
