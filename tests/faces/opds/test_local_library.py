"""A PSE reader walks the local library: root, source, all titles, a series, every page."""

import io

import pytest
from PIL import Image

from toshokan.faces.opds.atom import PSE
from toshokan.testing import ServedHost

from .reader import ACQUISITION, NAVIGATION, NS, STREAM, Reader, entry_titled, href, link

pytestmark = pytest.mark.anyio


async def open_series(reader: Reader) -> tuple[str, list]:
    root = await reader.feed("/_/opds")
    source = await reader.feed(href(entry_titled(root, "Local Library"), "subsection", NAVIGATION))
    everything = href(entry_titled(source, "All titles"), "subsection", NAVIGATION)
    series = await reader.every_entry(everything)
    return everything, series


async def test_walk_from_root_to_the_last_page(local_host: ServedHost) -> None:
    reader = Reader(local_host.client)
    _, series = await open_series(reader)
    assert len(series) == 3
    first = series[0]
    assert link(first, "http://opds-spec.org/image") is not None
    series_feed = await reader.feed(href(first, "subsection", ACQUISITION))
    chapters = series_feed.findall("a:entry", NS)
    assert series_feed.findtext("a:subtitle", namespaces=NS)  # the series described
    assert chapters
    # The count is of every entry the feed pages over: its chapters.
    assert len(chapters) == int(series_feed.findtext("os:totalResults", namespaces=NS) or 0)
    pages = await reader.read_chapter(chapters[0])
    assert len(pages) == 3
    assert all(Image.open(io.BytesIO(page)).format in ("JPEG", "PNG", "GIF") for page in pages)


async def test_max_width_resizes_keeping_the_aspect_ratio(local_host: ServedHost) -> None:
    reader = Reader(local_host.client)
    _, series = await open_series(reader)
    series_feed = await reader.feed(href(series[0], "subsection", ACQUISITION))
    chapter = series_feed.findall("a:entry", NS)[0]
    full = Image.open(io.BytesIO((await reader.read_chapter(chapter))[0]))
    small = Image.open(io.BytesIO((await reader.read_chapter(chapter, max_width=120))[0]))
    assert small.width == 120 < full.width
    assert abs(small.height / small.width - full.height / full.width) < 0.02


async def test_chapters_stream_straight_from_the_series_feed(local_host: ServedHost) -> None:
    """A library's page counts cost nothing upstream: every chapter entry carries its PSE link."""
    reader = Reader(local_host.client)
    _, series = await open_series(reader)
    series_feed = await reader.feed(href(series[0], "subsection", ACQUISITION))
    chapters = series_feed.findall("a:entry", NS)
    assert len(chapters) == 2
    for chapter in chapters:
        stream = link(chapter, STREAM)
        assert stream is not None, "the entry itself streams"
        assert stream.get(f"{{{PSE}}}count") == "3"
        assert stream.get("type") == "image/jpeg"
        assert link(chapter, "subsection") is None
    reader.fetched.clear()
    assert len(await reader.read_chapter(chapters[0])) == 3
    assert all("/pages/" in url for url in reader.fetched), "no detour through another feed"


async def test_list_entries_carry_summary_and_tags(local_host: ServedHost) -> None:
    reader = Reader(local_host.client)
    _, series = await open_series(reader)
    entry = next(e for e in series if e.findtext("a:title", namespaces=NS) == "Iron Garden")
    summary = entry.findtext("a:content", namespaces=NS) or ""
    assert summary and summary != "Iron Garden"
    labels = {c.get("label") for c in entry.findall("a:category", NS)}
    assert {"Action", "Drama"} <= labels
    # The series feed's own metadata says the same, and names the authors.
    series_feed = await reader.feed(href(entry, "subsection", ACQUISITION))
    assert series_feed.findtext("a:subtitle", namespaces=NS) == summary
    assert series_feed.findtext("a:author/a:name", namespaces=NS) == "Mara Voss"
    assert {"Action", "Drama"} <= {c.get("label") for c in series_feed.findall("a:category", NS)}
    assert series_feed.findtext("a:logo", namespaces=NS) and series_feed.findtext(
        "a:icon", namespaces=NS
    )


async def test_covers_and_thumbnails_at_most_300_wide(local_host: ServedHost) -> None:
    reader = Reader(local_host.client)
    _, series = await open_series(reader)
    for entry in series:
        thumbnail = await reader.get(href(entry, "http://opds-spec.org/image/thumbnail"))
        cover = await reader.get(href(entry, "http://opds-spec.org/image"))
        assert thumbnail.status_code == cover.status_code == 200
        assert Image.open(io.BytesIO(thumbnail.content)).width <= 300
        assert (
            Image.open(io.BytesIO(cover.content)).width
            >= Image.open(io.BytesIO(thumbnail.content)).width
        )


async def test_search_through_the_opensearch_description(local_host: ServedHost) -> None:
    reader = Reader(local_host.client)
    root = await reader.feed("/_/opds")
    source = await reader.feed(href(entry_titled(root, "Local Library"), "subsection", NAVIGATION))
    _, series = await open_series(reader)
    wanted = series[1].findtext("a:title", namespaces=NS) or ""
    found = await reader.search(source, wanted.split()[0])
    assert wanted in [e.findtext("a:title", namespaces=NS) for e in found.findall("a:entry", NS)]
    everywhere = await reader.search(root, wanted.split()[0])
    assert wanted in [
        e.findtext("a:title", namespaces=NS) for e in everywhere.findall("a:entry", NS)
    ]


async def test_sorts_are_facets_and_lists_paginate(local_host: ServedHost) -> None:
    reader = Reader(local_host.client)
    everything, _ = await open_series(reader)
    feed = await reader.feed(everything)
    facets = [f for f in feed.findall("a:link", NS) if f.get("rel") == "http://opds-spec.org/facet"]
    assert len(facets) >= 2
    assert (
        sum(f.get("{http://opds-spec.org/2010/catalog}activeFacet") == "true" for f in facets) == 1
    )
    by_title = await reader.feed(
        next(f.get("href") or "" for f in facets if f.get("title") == "Title")
    )
    titles = [e.findtext("a:title", namespaces=NS) or "" for e in by_title.findall("a:entry", NS)]
    assert titles in (sorted(titles), sorted(titles, reverse=True))
    # One title per page: every page links the next until the last.
    answer = await reader.get("/_/opds/local/all", params={"page": "2"})
    assert answer.status_code == 200
    assert (await reader.get("/_/opds/local/all", params={"page": "0"})).status_code == 400


async def test_unknown_things_are_not_found(local_host: ServedHost) -> None:
    client = local_host.client
    assert (await client.get("/_/opds/nosuch")).status_code == 404
    assert (await client.get("/_/opds/local/series/no-such-series")).status_code == 404
    assert (await client.get("/_/opds/local/series/BAD%20SLUG")).status_code == 404
