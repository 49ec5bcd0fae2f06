"""A kept chapter is a local chapter on every face, as each face's clients read it: an OPDS
reader walking to the last page and downloading the file, the OPDS 2.0 walk to a DiViNa
manifest's pages, Mihon through the Komga face, KOReader knowing the file by its partial MD5,
the Alethia app, the web reader and the spec's JSON; with the reader's place, written on any
face, shown on all of them. And all of that again once MangaDex took the chapter down, and
once it took the whole series down."""

import asyncio
import io
import random
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image

from tests.core.keeping.kept import pirates, settled
from tests.faces.alethia import app_decoder
from tests.faces.alethia.reader import AppReader
from tests.faces.komga.clients import komga_dtos as komga
from tests.faces.komga.helpers import SERVER, mihon
from tests.faces.kosync.koreader import KOReader, koreader_partial_md5
from tests.faces.opds.reader import (
    ACQUISITION,
    NAVIGATION,
    NS,
    STREAM,
    Reader,
    entry_titled,
    href,
    link,
)
from tests.faces.opds.test_opds2 import walk as opds2_walk
from tests.helpers.hosts import add_reader
from tests.sources.mangadex.fake import FakeMangaDex
from tests.sources.mangadex.image_servers import ImageServers
from toshokan.core.answers import Caller
from toshokan.core.keeping import Tie
from toshokan.errors import ChapterNotFound, MangaNotFound
from toshokan.faces.komga.ids import book_id, series_id
from toshokan.faces.opds.atom import PSE
from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio

REL_ACQUISITION = "http://opds-spec.org/acquisition"
TITLE = "Pirate Voyage"
PAGES = 3


def size(image: bytes) -> tuple[int, int]:
    """An image's size in pixels, decoded in full (as a reader app shows it)."""
    with Image.open(io.BytesIO(image)) as opened:
        opened.load()
        return opened.size


@dataclass(frozen=True)
class Who:
    """Who reads: the implicit reader of an open host, or a reader of a host with readers."""

    name: str = ""
    password: str = ""

    @property
    def auth(self) -> tuple[str, str] | None:
        return (self.name, self.password) if self.name else None

    def koreader(self, host: ServedHost) -> KOReader:
        return KOReader(host.client, self.name or "anyone", self.password or "whatever")


async def opds_walk(
    host: ServedHost, who: Who, tie: Tie, file: bytes, body: bytes, page: int
) -> None:
    """Root, the library, all titles, the series, the chapter: its place, every page through
    PSE, then the file through its acquisition link."""
    reader = Reader(host.client, auth=who.auth)
    root = await reader.feed("/_/opds")
    library = await reader.feed(href(entry_titled(root, "Local Library"), "subsection", NAVIGATION))
    everything = href(entry_titled(library, "All titles"), "subsection", NAVIGATION)
    found = [
        e
        for e in await reader.every_entry(everything)
        if e.findtext("a:title", namespaces=NS) == TITLE
    ]
    assert len(found) == 1
    series = await reader.feed(href(found[0], "subsection", ACQUISITION))
    (chapter,) = series.findall("a:entry", NS)
    stream = link(chapter, STREAM)
    assert stream is not None and f"/{tie.local_chapter}/pages/" in (stream.get("href") or "")
    assert stream.get(f"{{{PSE}}}lastRead") == str(page + 1)  # PSE counts from 1
    images = await reader.read_chapter(chapter)
    assert [size(image) for image in images] == [size(body)] * PAGES
    download = await reader.get(href(chapter, REL_ACQUISITION))
    assert download.status_code == 200 and download.content == file


async def komga_walk(host: ServedHost, who: Who, tie: Tie, body: bytes, page: int) -> None:
    """Mihon's Komga extension: the series, its books, a book's page list and every page,
    decoded as the extension decodes them; the book's place as Komga's own DTO says it."""
    assert tie.copy is not None
    _, source = mihon(host, who.name, who.password)
    series = series_id(tie.library, tie.local_manga)
    assert (await source.series_details(series)).title == TITLE
    (chapter,) = await source.chapters(series)
    assert chapter.url == f"{SERVER}/api/v1/books/{book_id(tie.copy)}"
    pages = await source.page_list(chapter.url)
    assert [p.index for p in pages] == list(range(1, PAGES + 1))
    for shown in pages:
        answer = await source.page_image(shown.image_url)
        # The face declares and serves every page as JPEG: the page, re-encoded.
        assert size(answer.content) == size(body)
    shown_book = await source.client.request("GET", chapter.url, check=True)
    book = komga.BookDto.model_validate_json(shown_book.content)
    assert book.media.pagesCount == PAGES
    assert book.readProgress is not None and book.readProgress.page == page + 1


async def koreader_sync(host: ServedHost, who: Who, file: bytes, tie: Tie, page: int) -> None:
    """KOReader opens the file it downloaded: its id is the host's, its place the reader's."""
    document = koreader_partial_md5(file)
    assert document == tie.document
    answer = await who.koreader(host).get_progress(document)
    assert answer.json()["progress"] == str(page + 1)


async def alethia_walk(host: ServedHost, tie: Tie, body: bytes) -> None:
    """The app: the series, its chapters, the pages (under the app's own row id), each image."""
    app = AppReader(host.client)
    manga = app_decoder.manga(await app.get(f"/{tie.library}/{tie.local_manga}"))
    assert manga["title"] == TITLE
    (chapter,) = app_decoder.chapters(await app.get(f"/{tie.library}/{tie.local_manga}/chapters"))
    row_id = random.randint(1, 2**53)
    path = f"/{tie.library}/{row_id}/chapters/{chapter['slug']}"
    pages = app_decoder.pages(await app.get(path))
    assert len(pages) == PAGES
    assert [(await app.fetch_image(url)).content for url in pages] == [body] * PAGES


async def spec_and_web(
    host: ServedHost, who: Who, tie: Tie, body: bytes, url: str, page: int
) -> None:
    """The spec's JSON (what the web reader reads), and the web reader's place on both the copy
    and its original (signed in, on a host with readers)."""
    manga = f"/{tie.library}/{tie.local_manga}"
    assert (await host.client.get(manga)).json()["title"] == TITLE
    (chapter,) = (await host.client.get(f"{manga}/chapters")).json()
    assert (chapter["slug"], chapter["url"]) == (tie.local_chapter, url)
    pages = (await host.client.get(f"{manga}/chapters/{tie.local_chapter}")).json()
    assert [(await host.client.get(p)).content for p in pages] == [body] * PAGES
    async with web_session(host, who):
        for source, series, slug in (
            (tie.library, tie.local_manga, tie.local_chapter),
            (tie.source, tie.manga, tie.chapter),
        ):
            places = (await host.client.get(f"/_/web/progress/{source}/{series}")).json()
            assert places["chapters"][slug]["page"] == page, source


@asynccontextmanager
async def web_session(host: ServedHost, who: Who) -> AsyncIterator[None]:
    """The web reader's browser, signed in as ``who`` where the host has readers."""
    if who.name:
        body = {"name": who.name, "secret": who.password}
        assert (await host.client.post("/_/web/session", json=body)).json()["reader"] == who.name
    try:
        yield
    finally:
        host.client.cookies.clear()


async def every_face(
    host: ServedHost, who: Who, tie: Tie, library: Path, body: bytes, url: str, page: int
) -> None:
    """The kept chapter read on every face, the reader's place (``page``, from 0) shown on
    each first (an OPDS-PSE walk moves it on)."""
    file = await asyncio.to_thread((library / tie.path).read_bytes)
    await koreader_sync(host, who, file, tie, page)
    await spec_and_web(host, who, tie, body, url, page)
    await komga_walk(host, who, tie, body, page)
    await opds_walk(host, who, tie, file, body, page)
    auth = {"auth": who.auth} if who.auth else {}
    pages = await opds2_walk(host.client, "Local Library", **auth)  # to a DiViNa page
    assert [size(image) for image in pages] == [size(body)] * PAGES
    await alethia_walk(host, tie, body)


@pytest.mark.parametrize("who", [Who(), Who("mika", "hunter22")], ids=["open", "readers"])
async def test_a_kept_chapter_reads_on_every_face_and_outlives_its_original(
    host: ServedHost, fake: FakeMangaDex, servers: ImageServers, library: Path, who: Who
) -> None:
    if who.name:
        await add_reader(host, who.name, who.password)
        await add_reader(host, "ren", "swordfish")  # another reader, whose place stays apart
    manga_id, chapter_ids = pirates(fake)
    kept = await host.core.keeper.keep("mangadex", manga_id, chapter_ids[0])
    tie = await settled(host, kept)
    url = f"https://mangadex.org/chapter/{chapter_ids[0]}"
    assert tie.copy is not None

    # Read online (the web reader, on MangaDex's chapter): the kept copy shows the place.
    original = f"/_/web/progress/mangadex/{manga_id}/{chapter_ids[0]}"
    async with web_session(host, who):
        place = {"page": 1, "pages": 3, "updated": time.time()}
        assert (await host.client.put(original, json=place)).status_code == 200
    await every_face(host, who, tie, library, servers.body, url, page=1)

    # MangaDex takes the chapter down: the copy reads the same; KOReader moves the place.
    del fake.chapters[chapter_ids[0]]
    host.core.cache.invalidate("mangadex")
    visit = await host.core.visit("mangadex", Caller({}, "http://testserver"))
    with pytest.raises(ChapterNotFound):
        await visit.pages(manga_id, chapter_ids[0])
    assert (await who.koreader(host).update_progress(tie.document, 1, PAGES)).status_code == 200
    await every_face(host, who, tie, library, servers.body, url, page=0)

    # Then the whole series: the copy still reads; Mihon moves the place through the Komga face.
    for chapter in chapter_ids[1:]:
        del fake.chapters[chapter]
    del fake.manga[manga_id]
    host.core.cache.invalidate("mangadex")
    visit = await host.core.visit("mangadex", Caller({}, "http://testserver"))
    with pytest.raises(MangaNotFound):
        await visit.manga(manga_id)
    _, source = mihon(host, who.name, who.password)
    progress = f"{SERVER}/api/v1/books/{book_id(tie.copy)}/read-progress"
    marked = await source.client.request(
        "PATCH", progress, content=b'{"page":2}', headers={"Content-Type": "application/json"}
    )
    assert marked.status_code == 204
    await every_face(host, who, tie, library, servers.body, url, page=1)
    if who.name:  # the other reader has no place in it, on any face
        assert (
            await KOReader(host.client, "ren", "swordfish").get_progress(tie.document)
        ).json() == {}
        _, theirs = mihon(host, "ren", "swordfish")
        book = await theirs.client.request("GET", progress.removesuffix("/read-progress"))
        assert komga.BookDto.model_validate_json(book.content).readProgress is None
