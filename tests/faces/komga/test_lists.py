"""Collections that name their series, and read lists made of the reader's places, as Mihon
browses them (Type = Read lists, the Collection filter), checked against Komga's document."""

import json

import pytest

from tests.faces.komga.clients import komga_openapi
from tests.faces.komga.clients.mihon_extension import TYPE_READLISTS, SearchFilters, Sort
from tests.faces.komga.clients.mihon_extension_models import PageWrapperDto, SeriesDto
from tests.faces.opds.reader import NS, STREAM, Reader, link
from toshokan.faces.komga.ids import book_of
from toshokan.testing import ServedHost

from .helpers import mihon

pytestmark = pytest.mark.anyio

JSON = {"Content-Type": "application/json"}


async def test_a_collection_names_the_series_it_lists(local_host: ServedHost) -> None:
    _, source = mihon(local_host)
    options = await source.filter_lists()
    assert options.collections
    for collection in options.collections:
        listed: list[str] = []
        for number in range(0, 20):
            answer = await source.client.request(
                "GET",
                f"{source.base_url}/api/v1/collections/{collection.id}/series?page={number}&size=2",
                check=True,
            )
            page = PageWrapperDto[SeriesDto].decode(answer.content)
            listed += [series.id for series in page.content]
            if page.last:
                break
        assert listed, collection.name
        assert collection.seriesIds == listed, collection.name
        one = await source.client.request(
            "GET", f"{source.base_url}/api/v1/collections/{collection.id}", check=True
        )
        assert one.status_code == 200  # its answer is checked with the others, below
        # Mihon's Collection filter lists the same series.
        found = await source.search(1, "", SearchFilters(collection=collection.id))
        assert [manga.url.rsplit("/", 1)[1] for manga in found.mangas] == listed[:20]
    assert komga_openapi.assert_answers_as_documented(source.client.exchanges) >= 4


async def test_keep_reading_is_the_books_started_and_not_finished(local_host: ServedHost) -> None:
    _, source = mihon(local_host)
    empty, news = (await source.search(1, "", SearchFilters(type=TYPE_READLISTS))).mangas
    assert (empty.title, news.title) == ("Keep reading", "New chapters")
    assert await source.chapter_list(news.url) == []  # following nothing (test_following.py)
    assert await source.chapter_list(empty.url) == []
    popular = await source.popular(1)
    first, second = popular.mangas[:2]
    started = min(await source.chapter_list(first.url), key=lambda c: c.chapter_number)
    finished = min(await source.chapter_list(second.url), key=lambda c: c.chapter_number)
    for chapter, body in ((started, b'{"page": 2}'), (finished, b'{"completed": true}')):
        await source.client.request(
            "PATCH", f"{chapter.url}/read-progress", content=body, headers=JSON, check=True
        )
    # A page read in an OPDS reader counts too: the second chapter of the second series.
    other = max(await source.chapter_list(second.url), key=lambda c: c.chapter_number)
    ref = book_of(other.url.rsplit("/", 1)[1])
    feed = await Reader(local_host.client).feed(f"/_/opds/local/series/{ref.manga}")
    streams = [link(e, STREAM) for e in feed.findall("a:entry", NS)]
    (template,) = [
        href
        for s in streams
        if s is not None and f"/{ref.chapter}/pages/" in (href := s.get("href") or "")
    ]
    page = template.replace("{pageNumber}", "0").replace("{maxWidth}", "")
    assert (await local_host.client.get(page)).status_code == 200

    reading, _ = (
        await source.search(1, "", SearchFilters(type=TYPE_READLISTS, sort=Sort(1, True)))
    ).mangas
    details = await source.manga_details(reading.url)
    assert details.title == "Keep reading"
    books = await source.chapter_list(reading.url)
    assert [chapter.url for chapter in sorted(books, key=lambda c: c.chapter_number)] == [
        other.url,  # the latest first
        started.url,
    ]
    thumbnail = await source.client.request("GET", reading.thumbnail_url, check=True)
    assert thumbnail.header("content-type") == "image/jpeg"
    assert komga_openapi.assert_answers_as_documented(source.client.exchanges) >= 4


async def test_books_by_read_date_are_the_home_shelves(local_host: ServedHost) -> None:
    """Komelia's *keep reading* shelf: ``/books?read_status=IN_PROGRESS&sort=readProgress.readDate,desc``."""
    _, source = mihon(local_host)
    popular = await source.popular(1)
    chapters = [
        min(await source.chapter_list(manga.url), key=lambda c: c.chapter_number)
        for manga in popular.mangas[:3]
    ]
    for chapter, body in zip(
        chapters, (b'{"page": 2}', b'{"completed": true}', b'{"page": 1}'), strict=True
    ):
        await source.client.request(
            "PATCH", f"{chapter.url}/read-progress", content=body, headers=JSON, check=True
        )
    shelf = await source.client.request(
        "GET",
        f"{source.base_url}/api/v1/books?read_status=IN_PROGRESS&sort=readProgress.readDate,desc",
        check=True,
    )
    page = json.loads(shelf.content)
    assert [book["id"] for book in page["content"]] == [
        chapters[2].url.rsplit("/", 1)[1],
        chapters[0].url.rsplit("/", 1)[1],
    ]
    assert page["totalElements"] == 2
    recent = json.loads(
        (
            await source.client.request(
                "GET", f"{source.base_url}/api/v1/books?sort=readProgress.readDate,desc", check=True
            )
        ).content
    )
    assert len(recent["content"]) == 3
    assert komga_openapi.assert_answers_as_documented(source.client.exchanges) >= 2
