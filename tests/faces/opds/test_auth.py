"""A library that requires a name and password, read through HTTP Basic as OPDS readers do."""

import httpx
import pytest

from toshokan.testing import ServedHost

from .reader import ACQUISITION, NAVIGATION, NS, Reader, entry_titled, href

pytestmark = pytest.mark.anyio

GOOD = httpx.BasicAuth("reader", "open sesame")


async def test_without_credentials_the_reader_is_asked_for_them(locked_host: ServedHost) -> None:
    client = locked_host.client
    root = await Reader(client).feed("/_/opds")  # the list of sources is open
    shelf = href(entry_titled(root, "Local Library"), "subsection", NAVIGATION)
    for url in (shelf, "/_/opds/shelf/all", "/_/opds/shelf/search?q=a"):
        answer = await client.get(url)
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"].startswith("Basic realm=")
        assert answer.json()["error"]["code"] == "INVALID_CREDENTIALS"


async def test_wrong_credentials_are_refused(locked_host: ServedHost) -> None:
    answer = await locked_host.client.get("/_/opds/shelf", auth=("reader", "wrong"))
    assert answer.status_code == 401
    assert "www-authenticate" in answer.headers


async def test_with_credentials_every_page_is_readable(locked_host: ServedHost) -> None:
    reader = Reader(locked_host.client, auth=GOOD)
    shelf = await reader.feed("/_/opds/shelf")
    series = await reader.every_entry(href(entry_titled(shelf, "All titles"), "subsection"))
    assert series
    series_feed = await reader.feed(href(series[0], "subsection", ACQUISITION))
    entry = series_feed.findall("a:entry", NS)[0]
    assert len(await reader.read_chapter(entry)) == 3
    # Page images need the credentials too.
    template = href(entry, "http://vaemendis.net/opds-pse/stream")
    page = template.replace("{pageNumber}", "0").replace("{maxWidth}", "")
    assert (await locked_host.client.get(page)).status_code == 401
    # Covers are signed links: an image loader without credentials still shows them.
    cover = await locked_host.client.get(href(series[0], "http://opds-spec.org/image/thumbnail"))
    assert cover.status_code == 200
    assert cover.headers["cache-control"].startswith("private")


async def test_feeds_with_credentials_are_private(locked_host: ServedHost) -> None:
    answer = await locked_host.client.get("/_/opds/shelf/all", auth=GOOD)
    assert answer.status_code == 200
    assert answer.headers["cache-control"].startswith("private")


async def test_a_kept_link_outliving_its_library_signature_still_shows(
    locked_host: ServedHost,
) -> None:
    """Search answers are cached; the library links inside may be older than the host's link."""
    reader = Reader(locked_host.client, auth=GOOD)
    shelf = await reader.feed("/_/opds/shelf/all")
    entry = shelf.findall("a:entry", NS)[0]
    series_feed = await reader.feed(href(entry, "subsection", ACQUISITION))
    slug = href(entry, "subsection").rsplit("/", 1)[-1]
    stale = f"http://testserver/_/shelf/covers/{slug}?exp=1&sig=0000"
    assert series_feed is not None
    link = locked_host.core.images.signed_url("http://testserver", "shelf", stale)
    answer = await locked_host.client.get(link)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("image/")
