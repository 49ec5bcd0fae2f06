"""Every kind of source through the face: MangaDex (through its fake, pages fetched by the host
with its Referer), an OPDS upstream (through a fake Komga catalogue), and a library locked with
its own credentials, listed only to those who can open it."""

import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.faces.komga.clients import komga_dtos as komga
from tests.faces.komga.clients.kotlinx_json import decode_as
from tests.faces.komga.clients.mihon_extension import SearchFilters, Sort
from tests.faces.komga.clients.mihon_extension_models import LibraryDto, PageWrapperDto, SeriesDto
from tests.faces.komga.clients.mihon_tracker import MihonKomgaTracker
from tests.sources.mangadex.fake import FakeMangaDex
from tests.sources.opds.fakes import Komga as KomgaCatalogue
from tests.sources.opds.helpers import serve_opds
from toshokan.sources.local import LocalLibrary, LocalSettings, write_demo_library
from toshokan.testing import ServedHost, serve_host

from .helpers import SECRET, SERVER, mihon

pytestmark = pytest.mark.anyio


async def test_mangadex_browse_filter_read(mangadex_host: ServedHost) -> None:
    _, source = mihon(mangadex_host)
    options = await source.filter_lists()
    assert [library.id for library in options.libraries] == ["mangadex"]
    assert "Action" in options.genres
    popular = await source.popular(1)
    spec = await mangadex_host.client.post("/mangadex/search", json={"page": 1, "sort": "title"})
    assert [manga.title for manga in popular.mangas] == [e["title"] for e in spec.json()["results"]]
    assert "Pirate Voyage" in [manga.title for manga in popular.mangas]
    tagged = await source.search(1, "", SearchFilters(genres=("Action",), sort=Sort(1, True)))
    assert [manga.title for manga in tagged.mangas] == ["Pirate Voyage"]
    pirates = tagged.mangas[0]
    details = await source.manga_details(pirates.url)
    assert details.author == "Oda Eiichirou"
    assert details.description == "A crew sails for the last island."
    chapters = await source.chapter_list(pirates.url)
    assert [chapter.chapter_number for chapter in chapters] == [3.0, 2.0, 1.0]
    assert {chapter.scanlator for chapter in chapters} == {"Straw Hat Scans"}
    pages = await source.page_list(chapters[-1].url)
    image = await source.page_image(pages[0].image_url)
    assert Image.open(io.BytesIO(image.content)).format == "JPEG"
    fetched = mangadex_host.app.state.image_servers.requests
    assert fetched and fetched[-1].headers["referer"] == "https://mangadex.org/"


async def test_mangadex_series_thumbnail(mangadex_host: ServedHost) -> None:
    _, source = mihon(mangadex_host)
    pirates = (await source.search(1, "Pirate", SearchFilters(sort=Sort(0, True)))).mangas[0]
    thumbnail = await source.client.request("GET", pirates.thumbnail_url)
    assert thumbnail.status_code == 200
    assert Image.open(io.BytesIO(thumbnail.content)).width <= 300


async def test_an_opds_upstream_reads_through_the_face(tmp_path: Path) -> None:
    catalogue = KomgaCatalogue()
    credentials = {"username": KomgaCatalogue.user, "password": KomgaCatalogue.password}
    async with serve_opds(catalogue, tmp_path, **credentials) as host:
        _, source = mihon(host)
        found = await source.search(1, "harbour", SearchFilters(sort=Sort(0, True)))
        assert [manga.title for manga in found.mangas] == ["Blue Harbour"]
        chapters = await source.chapter_list(found.mangas[0].url)
        assert [chapter.chapter_number for chapter in chapters] == [5.0, 4.0, 3.0, 2.0, 1.0]
        pages = await source.page_list(chapters[-1].url)
        assert len(pages) == 4  # volume 1 has 3 + 1 pages
        image = await source.page_image(pages[-1].image_url)
        assert image.header("content-type") == "image/jpeg"


@pytest.fixture
async def locked_host(tmp_path: Path) -> Any:
    root = tmp_path / "library"
    write_demo_library(root, series=2, chapters=1, pages=2)
    locked = LocalSettings(
        root=root, watch=False, auth="basic", username="reader", password="open sesame"
    )
    async with serve_host(
        {
            "local": (LocalLibrary, LocalSettings(root=root, watch=False)),
            "shelf": (LocalLibrary, locked),
        },
        data_dir=tmp_path / "data",
        host={"secret": SECRET},
        limits={"rate_limit": 0},
    ) as served:
        yield served


async def libraries(host: ServedHost, auth: tuple[str, str] | None = None) -> list[str]:
    answer = await host.client.get("/_/komga/api/v1/libraries", auth=auth)
    return [library.id for library in decode_as(list[LibraryDto], answer.content)]


async def test_a_locked_library_is_listed_to_those_who_can_open_it(locked_host: ServedHost) -> None:
    assert await libraries(locked_host) == ["local"]
    assert await libraries(locked_host, ("reader", "wrong")) == ["local"]
    assert await libraries(locked_host, ("reader", "open sesame")) == ["local", "shelf"]
    bare = await locked_host.client.get("/_/komga/api/v1/series?search=")
    everything = await locked_host.client.get(
        "/_/komga/api/v1/series?search=", auth=("reader", "open sesame")
    )
    seen = PageWrapperDto[SeriesDto].decode(bare.content).content
    opened = PageWrapperDto[SeriesDto].decode(everything.content).content
    assert {s.libraryId for s in seen} == {"local"}
    assert {s.libraryId for s in opened} == {"local", "shelf"}


async def test_a_locked_series_asks_for_its_credentials(locked_host: ServedHost) -> None:
    everything = await locked_host.client.get(
        "/_/komga/api/v1/series?search=&library_id=shelf", auth=("reader", "open sesame")
    )
    series_id = PageWrapperDto[SeriesDto].decode(everything.content).content[0].id
    refused = await locked_host.client.get(f"/_/komga/api/v1/series/{series_id}")
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Basic ")
    assert refused.json()["status"] == 401
    # Mihon's extension answers the 401 with the name and password it was given.
    _, source = mihon(locked_host, "reader", "open sesame")
    details = await source.series_details(series_id)
    assert details.url == f"{SERVER}/api/v1/series/{series_id}"


async def test_chapter_versions_are_books_the_tracker_counts_once(
    mangadex_host: ServedHost, mangadex_fake: FakeMangaDex
) -> None:
    """Two groups' chapter 2 are two books of number 2; Mihon's tracker counts the number once,
    and marking up to it marks both versions read."""
    pirates = next(m for m in mangadex_fake.manga.values() if m.title["en"] == "Pirate Voyage")
    other = mangadex_fake.add_group("Other Scans")
    mangadex_fake.add_chapter(pirates, "2", title="Chapter 2", groups=[other.id])
    network, source = mihon(mangadex_host)
    series = (await source.search(1, "Pirate", SearchFilters(sort=Sort(0, True)))).mangas[0]
    chapters = await source.chapter_list(series.url)
    assert sorted((c.chapter_number, c.scanlator) for c in chapters) == [
        (1.0, "Straw Hat Scans"),
        (2.0, "Other Scans"),
        (2.0, "Straw Hat Scans"),
        (3.0, "Straw Hat Scans"),
    ]
    tracker = MihonKomgaTracker(network.tracker_client())
    track = await tracker.get_track_search(series.url)
    assert track.total_chapters == 3
    track = await tracker.chapter_read(track, 2.0)
    assert track.last_chapter_read == 2.0
    books = await source.client.request("GET", f"{series.url}/books?unpaged=true")
    read = {
        (book.metadata.numberSort, book.metadata.authors[0].name)
        for book in komga.Page[komga.BookDto].model_validate_json(books.content).content
        if book.readProgress is not None and book.readProgress.completed
    }
    assert read == {(1.0, "Straw Hat Scans"), (2.0, "Other Scans"), (2.0, "Straw Hat Scans")}


async def test_new_and_updated_list_the_latest_first(mangadex_host: ServedHost) -> None:
    spec = await mangadex_host.client.post(
        "/mangadex/search", json={"page": 1, "sort": "latest", "direction": "desc"}
    )
    latest = [entry["title"] for entry in spec.json()["results"]]
    for path in ("new", "updated"):
        answer = await mangadex_host.client.get(f"/_/komga/api/v1/series/{path}?page=0")
        page = PageWrapperDto[SeriesDto].decode(answer.content)
        assert [series.metadata.title for series in page.content] == latest, path


async def test_presets_are_collections_the_extension_searches(mangadex_host: ServedHost) -> None:
    _, source = mihon(mangadex_host)
    options = await source.filter_lists()
    config = (await mangadex_host.client.get("/mangadex")).json()
    assert [c.name for c in options.collections] == [
        f"MangaDex: {preset['name']}" for preset in config["presets"]
    ]
    first = options.collections[0]
    found = await source.search(1, "", SearchFilters(collection=first.id))
    spec = await mangadex_host.client.post(
        "/mangadex/search", json={**config["presets"][0]["request"], "page": 1, "limit": 20}
    )
    assert [m.title for m in found.mangas] == [e["title"] for e in spec.json()["results"]]
