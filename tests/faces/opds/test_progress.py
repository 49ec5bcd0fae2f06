"""A reader's place in every chapter, as an OPDS-PSE reader streams pages and reads it back."""

import time
from datetime import datetime
from xml.etree.ElementTree import Element

import pytest

from tests.helpers.hosts import add_reader
from toshokan.core.progress import ChapterRef, Position
from toshokan.faces.opds.atom import PSE
from toshokan.testing import ServedHost

from .reader import ACQUISITION, NS, STREAM, Reader, entry_titled, href, link

pytestmark = pytest.mark.anyio

LAST_READ = f"{{{PSE}}}lastRead"
LAST_READ_DATE = f"{{{PSE}}}lastReadDate"


async def chapters_of_first_series(reader: Reader) -> tuple[str, list[Element]]:
    """Walk from the root to the first series, as a reader does: its feed's address and chapters."""
    root = await reader.feed("/_/opds")
    source = await reader.feed(href(entry_titled(root, "Local Library"), "subsection"))
    titles = await reader.every_entry(href(entry_titled(source, "All titles"), "subsection"))
    series_url = href(titles[0], "subsection", ACQUISITION)
    series = await reader.feed(series_url)
    return series_url, [e for e in series.findall("a:entry", NS) if link(e, STREAM) is not None]


def stream(entry: Element) -> Element:
    found = link(entry, STREAM)
    assert found is not None
    return found


def page_url(entry: Element, number: int) -> str:
    template = stream(entry).get("href") or ""
    return template.replace("{pageNumber}", str(number)).replace("{maxWidth}", "800")


async def streamed_entry(reader: Reader, series_url: str, title: str) -> Element:
    return entry_titled(await reader.feed(series_url), title)


async def test_pages_streamed_move_the_place_forward_and_an_explicit_write_wins(
    readers_host: ServedHost,
) -> None:
    await add_reader(readers_host, "ayumi", "correct horse")
    reader = Reader(readers_host.client, auth=("ayumi", "correct horse"))
    series_url, chapters = await chapters_of_first_series(reader)
    chapter = chapters[0]
    title = chapter.findtext("a:title", namespaces=NS) or ""
    assert LAST_READ not in stream(chapter).attrib  # never opened: no place shown
    assert LAST_READ_DATE not in stream(chapter).attrib
    for number in range(4):
        assert (await reader.get(page_url(chapter, number))).status_code == 200
    shown = stream(await streamed_entry(reader, series_url, title))
    assert shown.get(LAST_READ) == "4"  # page index 3 read: the 4th page, counted from 1
    read_at = shown.get(LAST_READ_DATE) or ""
    assert read_at.endswith("Z") and abs(time.time() - _epoch(read_at)) < 60
    # Going back to look at page 2 again (index 1) leaves the place where it was.
    assert (await reader.get(page_url(chapter, 1))).status_code == 200
    assert stream(await streamed_entry(reader, series_url, title)).get(LAST_READ) == "4"
    # Another face (a web reader, a Komga client) sets the place back to page index 1.
    slugs = (stream(chapter).get("href") or "").split("/series/")[1].split("/")[:2]
    ref = ChapterRef("local", slugs[0], slugs[1])
    moved = Position(1, 6, False, time.time() + 1, device="Web reader")
    assert await readers_host.core.progress.arecord("ayumi", ref, moved)
    assert stream(await streamed_entry(reader, series_url, title)).get(LAST_READ) == "2"
    # The chapter's own feed says the same.
    own = await reader.feed(series_url.split("?")[0] + "/" + slugs[1])
    assert stream(own.findall("a:entry", NS)[0]).get(LAST_READ) == "2"


async def test_two_readers_never_see_each_others_place(readers_host: ServedHost) -> None:
    await add_reader(readers_host, "ayumi", "correct horse")
    key = await add_reader(readers_host, "botan", "battery staple")
    ayumi = Reader(readers_host.client, auth=("ayumi", "correct horse"))
    botan = Reader(readers_host.client, auth=("botan", key))
    series_url, chapters = await chapters_of_first_series(ayumi)
    for number in range(3):
        assert (await ayumi.get(page_url(chapters[0], number))).status_code == 200
    assert (await botan.get(page_url(chapters[1], 5))).status_code == 200
    ayumi_feed = await ayumi.feed(series_url)
    botan_feed = await botan.feed(series_url)
    titles = [c.findtext("a:title", namespaces=NS) or "" for c in chapters[:2]]
    assert [stream(entry_titled(ayumi_feed, t)).get(LAST_READ) for t in titles] == ["3", None]
    assert [stream(entry_titled(botan_feed, t)).get(LAST_READ) for t in titles] == [None, "6"]


async def test_the_series_feed_asks_the_store_once(
    readers_host: ServedHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader = Reader(readers_host.client)  # no readers: the implicit one
    series_url, chapters = await chapters_of_first_series(reader)
    assert len(chapters) > 1
    store = readers_host.core.progress
    asked: list[str] = []
    for name in ("positions", "position"):
        original = getattr(store, name)

        def counted(*args: object, _name: str = name, _original: object = original) -> object:
            asked.append(_name)
            return _original(*args)  # type: ignore[operator]

        monkeypatch.setattr(store, name, counted)
    await reader.feed(series_url)
    assert asked == ["positions"]


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
