"""A library that accepts the host's readers (``auth = "readers"``), read as OPDS readers read:
the reader's one sign-in (Basic, or an API key) opens it, with no second prompt."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.helpers.hosts import add_reader
from tests.helpers.libraries import DemoLibrary
from toshokan.faces.opds.atom import PSE
from toshokan.sources.local import LocalLibrary
from toshokan.testing import ServedHost

from .reader import ACQUISITION, NS, STREAM, Reader, entry_titled, href, link
from .servers import ATTEMPTS, LOCKED, local, serving

pytestmark = pytest.mark.anyio

MIKA = ("mika", "hunter2")


@pytest.fixture
async def host(tmp_path: Path, demo_library: DemoLibrary) -> AsyncIterator[ServedHost]:
    """``shelf`` accepts the host's readers; ``own`` is locked with an account of its own."""
    root = demo_library(series=2, chapters=2, pages=3)
    sources = {
        "shelf": (LocalLibrary, {"root": root, "watch": False, "auth": "readers"}),
        "own": local(root, index_path=tmp_path / "own.sqlite3", **LOCKED),
    }
    async with serving(sources, tmp_path, auth_attempts=ATTEMPTS) as served:
        yield served


async def test_a_readers_sign_in_opens_the_catalogue_and_its_pages(host: ServedHost) -> None:
    await add_reader(host, *MIKA)
    reader = Reader(host.client, auth=MIKA)
    shelf = await reader.feed("/_/opds/shelf")
    series = await reader.every_entry(href(entry_titled(shelf, "All titles"), "subsection"))
    assert len(series) == 2
    found = await reader.search(shelf, series[0].findtext("a:title", namespaces=NS) or "")
    assert found.findall("a:entry", NS)
    feed = await reader.feed(href(series[0], "subsection", ACQUISITION))
    chapter = feed.findall("a:entry", NS)[0]
    assert len(await reader.read_chapter(chapter)) == 3
    # The pages streamed are the reader's place, shown on the stream link.
    again = await reader.feed(href(series[0], "subsection", ACQUISITION))
    stream = link(again.findall("a:entry", NS)[0], STREAM)
    assert stream is not None and stream.get(f"{{{PSE}}}lastRead") == "3"
    # No credentials, no pages: the stream link is not a signed one.
    template = href(chapter, STREAM)
    page = template.replace("{pageNumber}", "0").replace("{maxWidth}", "")
    assert (await host.client.get(page)).status_code == 401
    assert (await host.client.get("/_/opds/v2/shelf", auth=MIKA)).status_code == 200


async def test_the_root_feed_tells_a_signed_in_reader_only_of_locks_still_to_open(
    host: ServedHost,
) -> None:
    await add_reader(host, *MIKA)
    root = await Reader(host.client, auth=MIKA).feed("/_/opds")
    content = {
        entry.findtext("a:id", namespaces=NS): entry.findtext("a:content", namespaces=NS) or ""
        for entry in root.findall("a:entry", NS)
    }
    shelf, own = content["urn:toshokan:opds:shelf"], content["urn:toshokan:opds:own"]
    assert "sign-in required" not in shelf
    assert "sign-in required" in own


async def test_an_api_key_opens_it_too(host: ServedHost) -> None:
    key = await add_reader(host, *MIKA)
    for sent in ({"auth": ("mika", key)}, {"headers": {"X-API-Key": key}}):
        answer = await host.client.get("/_/opds/shelf/all", **sent)
        assert answer.status_code == 200
        assert answer.headers["cache-control"].startswith("private")


async def test_a_source_with_its_own_account_still_asks_for_it(host: ServedHost) -> None:
    await add_reader(host, *MIKA)
    answer = await host.client.get("/_/opds/own", auth=MIKA)
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith("Basic realm=")


async def test_wrong_passwords_spend_the_readers_budget(host: ServedHost) -> None:
    await add_reader(host, *MIKA)
    for _ in range(ATTEMPTS):
        assert (await host.client.get("/_/opds/shelf", auth=("mika", "guess"))).status_code == 401
    assert (await host.client.get("/_/opds/shelf", auth=MIKA)).status_code == 429


async def test_on_a_host_without_readers_it_stays_locked(host: ServedHost) -> None:
    for auth in (None, ("anyone", "anything")):
        answer = await host.client.get("/_/opds/shelf", auth=auth)
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"].startswith("Basic realm=")
