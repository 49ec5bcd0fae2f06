"""Keeping MangaDex chapters in the local library: the kept file is the same chapter as its
original on every face, found by the library's watcher within seconds, read with the reader's
place both ways, and still there, with that place, once MangaDex removed it."""

import asyncio
import json
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
from comicapi.comicarchive import ComicArchive

from tests.core.keeping.kept import BASE, SEEN_WITHIN, pirates, settled, until, upstream
from tests.faces.komga.clients import komga_dtos as komga
from tests.faces.komga.helpers import SERVER, mihon
from tests.faces.kosync.koreader import KOReader, book_digest
from tests.sources.mangadex.fake import AT_HOME, FakeMangaDex
from tests.sources.mangadex.image_servers import ImageServers, webp
from toshokan.core.answers import Caller
from toshokan.core.hosted import ConfigurationError
from toshokan.core.keeping import BadImage
from toshokan.core.progress import ChapterRef, Position
from toshokan.errors import MangaNotFound
from toshokan.faces.komga.ids import book_id, series_id
from toshokan.sources.local import LocalLibrary, LocalSettings
from toshokan.sources.local.comicinfo import parse_comicinfo
from toshokan.sources.local.seriesjson import parse_series_json
from toshokan.testing import ServedHost, serve_host

pytestmark = pytest.mark.anyio
JSON = {"Content-Type": "application/json"}


async def test_a_kept_chapter_is_its_original_in_the_library(
    host: ServedHost, fake: FakeMangaDex, servers: ImageServers, library: Path
) -> None:
    manga_id, chapter_ids = pirates(fake)
    servers.covers = webp(300, 450, (20, 60, 200))
    started = time.monotonic()
    kept = await host.core.keeper.keep("mangadex", manga_id, chapter_ids[0])
    assert kept.written
    path = library / kept.tie.path
    assert (
        kept.tie.path == "Pirate Voyage/Pirate Voyage Vol.1 Ch.1 - Chapter 1 [Straw Hat Scans].cbz"
    )
    assert sorted(p.name for p in (library / "Pirate Voyage").iterdir()) == [
        "Pirate Voyage Vol.1 Ch.1 - Chapter 1 [Straw Hat Scans].cbz",
        "cover.webp",
        "series.json",
    ]
    # Pages in reading order under names that sort, stored byte for byte as they were sent.
    with zipfile.ZipFile(path) as archive:
        images = [i for i in archive.infolist() if i.filename != "ComicInfo.xml"]
        assert [i.filename for i in images] == ["001.webp", "002.webp", "003.webp"]
        assert {i.compress_type for i in images} == {zipfile.ZIP_STORED}
        assert [archive.read(i) for i in images] == [servers.body] * 3
    # The series' cover as sent, and Mylar's series.json, as the library reads it.
    cover = await asyncio.to_thread((library / "Pirate Voyage" / "cover.webp").read_bytes)
    assert cover == servers.covers
    series = parse_series_json((library / "Pirate Voyage" / "series.json").read_bytes())
    assert (series.name, series.description, series.status) == (
        "Pirate Voyage",
        "A crew sails for the last island.",
        "Continuing",
    )
    tie = await settled(host, kept)  # the watcher saw the file renamed into place: no rescan asked
    assert time.monotonic() - started < SEEN_WITHIN
    original, chapters = await upstream(host, manga_id)
    chapter = next(c for c in chapters if c.slug == chapter_ids[0])

    local = await host.core.visit("local", Caller({}, BASE))
    assert tie.copy is not None
    copy = (await local.manga(tie.local_manga)).value
    assert (copy.title, copy.synopsis, copy.authors) == (
        original.title,
        original.synopsis,
        original.authors,
    )
    assert copy.tags == original.tags and copy.classification == original.classification
    assert copy.publication == original.publication
    assert copy.readingDirection == original.readingDirection == "rtl"  # its ComicInfo's Manga
    # The library's cover of the series is the one kept beside it, as MangaDex sent it.
    assert (await host.client.get(copy.covers[0].removeprefix(BASE))).content == servers.covers
    (listed,) = (await local.chapters(tie.local_manga)).value
    assert (listed.title, listed.number, listed.language, listed.scanlator, listed.url) == (
        chapter.title,
        chapter.number,
        chapter.language,
        chapter.scanlator,
        chapter.url,
    )
    assert listed.date.date() == chapter.date.date()
    # The pages, byte for byte as the at-home node sent them, in order.
    pages = (await local.pages(tie.local_manga, tie.local_chapter)).value
    assert len(pages) == 3
    for url in pages:
        assert (await host.client.get(url.removeprefix(BASE))).content == servers.body
    # The whole file, as OPDS readers download it (its acquisition link).
    download = await local.download(tie.local_manga, tie.local_chapter)
    assert download is not None and download.media_type == "application/vnd.comicbook+zip"
    fetched = await host.client.get(download.url.removeprefix(BASE))
    assert fetched.content == await asyncio.to_thread(path.read_bytes)
    # KOReader's id of the file is the library's.
    found = await host.source("local").chapter_of_file(book_digest(path))
    assert (found.manga_slug, found.chapter_slug) == (tie.local_manga, tie.local_chapter)

    # The pages came from a MangaDex@Home node: reported, as the page proxy's are.
    async def reported() -> list[str] | None:
        urls = [r["url"] for r in fake.reports]
        return urls if len(urls) >= 3 else None

    assert all(url.startswith(AT_HOME) for url in await until(reported))
    # Kept twice is kept once.
    again = await host.core.keeper.keep("mangadex", manga_id, chapter_ids[0])
    assert not again.written and again.tie.path == kept.tie.path
    assert len(await asyncio.to_thread(lambda: list(library.rglob("*.cbz")))) == 1


async def test_the_comicinfo_agrees_with_the_upstream_for_the_library_and_comictagger(
    host: ServedHost, fake: FakeMangaDex, library: Path
) -> None:
    manga_id, chapter_ids = pirates(fake)
    kept = await host.core.keeper.keep("mangadex", manga_id, chapter_ids[1])
    original, chapters = await upstream(host, manga_id)
    chapter = next(c for c in chapters if c.slug == chapter_ids[1])
    path = library / kept.tie.path
    with zipfile.ZipFile(path) as archive:
        ours = parse_comicinfo(archive.read("ComicInfo.xml"))
    theirs = ComicArchive(path).read_cix()
    assert ours.series == theirs.series == original.title
    assert ours.title == theirs.title == chapter.title
    assert ours.number == 2.0 and theirs.issue == "2"
    assert ours.volume == 1.0 and theirs.volume == 1
    assert ours.summary == theirs.comments == original.synopsis
    assert ours.writers == original.authors
    assert [c["person"] for c in theirs.credits if c["role"] == "Writer"] == original.authors
    assert ours.genres == ours.tags == ["Action"]
    assert theirs.genre == "Action"  # comicapi reads ComicInfo 2.0, which has no Tags
    # MangaDex says the series' original is Japanese: read right to left.
    assert original.readingDirection == "rtl"
    assert ours.manga == theirs.manga == "YesAndRightToLeft"
    assert ours.language == theirs.language == chapter.language
    assert ours.scanlator == theirs.scan_info == chapter.scanlator
    assert ours.web == theirs.web_link == chapter.url
    assert theirs.page_count == len(theirs.pages) == 3
    assert [int(p["ImageSize"]) for p in theirs.pages] == [len(ImageServers(fake).body)] * 3
    assert ours.age_rating == theirs.maturity_rating == "Everyone"  # MangaDex's "safe"
    assert ours.date is not None
    assert (ours.date.year, ours.date.month, ours.date.day) == (
        chapter.date.year,
        chapter.date.month,
        chapter.date.day,
    )


async def test_a_readers_place_carries_over_both_ways(
    host: ServedHost, fake: FakeMangaDex, library: Path
) -> None:
    manga_id, chapter_ids = pirates(fake)
    first, second = (ChapterRef("mangadex", manga_id, c) for c in chapter_ids[:2])
    network, source = mihon(host)
    # Read online first (Mihon marks MangaDex's chapter read through the Komga face), kept
    # later: the kept file shows it read in KOReader, the copy everywhere.
    read_online = f"{SERVER}/api/v1/books/{book_id(first)}/read-progress"
    marked = await source.client.request(
        "PATCH", read_online, content=b'{"completed":true}', headers=JSON
    )
    assert marked.status_code == 204
    kept_first = await settled(
        host, await host.core.keeper.keep("mangadex", manga_id, first.chapter)
    )
    assert kept_first.copy is not None
    device = KOReader(host.client, "anyone", "whatever")
    shown = (await device.get_progress(book_digest(library / kept_first.path))).json()
    assert (shown["progress"], shown["percentage"]) == ("3", 1.0)
    place = await host.core.progress.aposition("", kept_first.copy)
    assert place is not None and place.finished
    # Read in KOReader from the kept file: the original shows read in the Komga face (Mihon).
    kept_second = await settled(
        host, await host.core.keeper.keep("mangadex", manga_id, second.chapter)
    )
    document = book_digest(library / kept_second.path)
    assert (await device.update_progress(document, 3, 3)).status_code == 200
    answer = await source.client.request("GET", f"{SERVER}/api/v1/books/{book_id(second)}")
    book = komga.BookDto.model_validate_json(answer.content)
    assert book.readProgress is not None and book.readProgress.completed
    # Mihon's Komga tracker, on the MangaDex series: both chapters read, in order.
    series = f"{SERVER}/api/v1/series/{series_id('mangadex', manga_id)}"
    assert (await source.manga_details(series)).title == "Pirate Voyage"
    tracked = f"{series.replace('/api/v1/', '/api/v2/')}/read-progress/tachiyomi"
    progress = json.loads((await network.tracker_client().request("GET", tracked)).content)
    assert (progress["booksReadCount"], progress["lastReadContinuousNumberSort"]) == (2, 2)
    # Marked unread in Mihon on the original: unread on the copy too.
    assert kept_second.copy is not None
    unread = f"{SERVER}/api/v1/books/{book_id(second)}/read-progress"
    assert (await source.client.request("DELETE", unread)).status_code == 204
    assert await host.core.progress.aposition("", kept_second.copy) is None
    assert (await device.get_progress(document)).json() == {}


async def test_the_kept_copy_outlives_its_original_with_its_place(
    host: ServedHost, fake: FakeMangaDex, library: Path
) -> None:
    manga_id, chapter_ids = pirates(fake)
    tie = await settled(host, await host.core.keeper.keep("mangadex", manga_id, chapter_ids[0]))
    assert tie.copy is not None
    await host.core.progress.arecord("", tie.original, Position(1, 3, False, 2000.0))
    # MangaDex takes the chapter down, then the whole series.
    del fake.chapters[chapter_ids[0]]
    del fake.manga[manga_id]
    host.core.cache.invalidate("mangadex")
    visit = await host.core.visit("mangadex", Caller({}, BASE))
    with pytest.raises(MangaNotFound):
        await visit.manga(manga_id)
    local = await host.core.visit("local", Caller({}, BASE))
    pages = (await local.pages(tie.local_manga, tie.local_chapter)).value
    statuses = [(await host.client.get(url.removeprefix(BASE))).status_code for url in pages]
    assert statuses == [200, 200, 200]
    answer = await host.client.get(f"/_/komga/api/v1/books/{book_id(tie.copy)}")
    book = komga.BookDto.model_validate_json(answer.content)
    assert book.readProgress is not None and book.readProgress.page == 2  # Komga counts from 1
    assert (library / tie.path).is_file()


async def test_a_corrupt_page_fails_the_chapter_and_leaves_the_library_as_it_was(
    host: ServedHost, fake: FakeMangaDex, servers: ImageServers, library: Path
) -> None:
    manga_id, chapter_ids = pirates(fake)
    await host.core.keeper.keep("mangadex", manga_id, chapter_ids[0])
    before = await asyncio.to_thread(lambda: sorted(p.name for p in library.rglob("*")))
    servers.body = servers.body[: len(servers.body) // 2]  # cut short on the way
    with pytest.raises(BadImage):
        await host.core.keeper.keep("mangadex", manga_id, chapter_ids[1])
    after = await asyncio.to_thread(lambda: sorted(p.name for p in library.rglob("*")))
    assert after == before
    ties = host.core.keeper.ties
    assert await asyncio.to_thread(ties.of_chapter, "mangadex", manga_id, chapter_ids[1]) is None


async def test_a_keep_folder_no_library_serves_stops_the_host(
    library: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sources: dict[str, Any] = {"local": (LocalLibrary, LocalSettings(root=library, watch=False))}
    with pytest.raises(ConfigurationError) as refused:
        async with serve_host(sources, data_dir=tmp_path / "data", keep={"folder": str(elsewhere)}):
            pass
    root = await asyncio.to_thread(library.resolve)
    assert str(refused.value) == (
        f"keep.folder: {elsewhere} is not the root of a local library the host serves (kept "
        f"chapters would not be seen; libraries: local: {root})"
    )
    # A subfolder would be one series of the library, not a library: refused too.
    with pytest.raises(ConfigurationError):
        async with serve_host(
            sources, data_dir=tmp_path / "data", keep={"folder": str(library / "Kept")}
        ):
            pass
