"""An OPDS 2 reader's progression: both documents read and written, a stale one refused."""

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.helpers.hosts import add_reader
from toshokan.testing import ServedHost

from .opds2_schema import assert_feed, assert_manifest

pytestmark = pytest.mark.anyio

AUTH = ("ayumi", "correct horse")
OPDS_PROGRESSION = ("http://opds-spec.org/progression", "application/opds-progression+json")
READIUM = ("http://www.cantook.com/api/progression", "application/vnd.readium.progression+json")
RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def stamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def link_of(links: list[dict[str, Any]], rel: str, type_: str) -> str:
    return next(k["href"] for k in links if k.get("rel") == rel and k.get("type") == type_)


async def publication(client: httpx.AsyncClient) -> tuple[dict[str, Any], dict[str, Any]]:
    """The first chapter of the first series, walked to as a reader does; and its manifest."""
    source = (await client.get("/_/opds/v2/local", auth=AUTH)).json()
    all_titles = next(n["href"] for n in source["navigation"] if n["title"] == "All titles")
    titles = (await client.get(all_titles, auth=AUTH)).json()
    series_url = titles["navigation"][0]["href"]
    series = (await client.get(series_url, auth=AUTH)).json()
    assert_feed(series)
    chapter = series["publications"][0]
    manifest_url = next(
        k["href"] for k in chapter["links"] if k["type"].startswith("application/divina")
    )
    manifest = (await client.get(manifest_url, auth=AUTH)).json()
    assert_manifest(manifest)
    return chapter, manifest


def check_opds_document(document: dict[str, Any]) -> None:
    """What the OPDS Progression 1.0 draft requires of a document."""
    assert RFC3339.match(document["modified"])
    assert re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", document["device"]["id"])  # a URI
    assert document["device"]["name"]
    assert 0 <= document["progression"] <= 1
    assert all(isinstance(r, str) for r in document.get("references", []))


async def test_opds_progression_is_read_written_and_guarded(readers_host: ServedHost) -> None:
    await add_reader(readers_host, "ayumi", "correct horse")
    client = readers_host.client
    chapter, manifest = await publication(client)
    url = link_of(chapter["links"], *OPDS_PROGRESSION)
    assert link_of(manifest["links"], *OPDS_PROGRESSION) == url
    assert (await client.get(url)).status_code == 401  # whose place? sign in first
    empty = await client.get(url, auth=AUTH)
    assert (empty.status_code, empty.content) == (200, b"")
    now = datetime.now(UTC)
    sent = {
        "modified": stamp(now),
        "device": {"id": "urn:uuid:0b1c", "name": "Tablet"},
        "progression": 0.5,
        "references": ["#page=4"],
    }
    created = await client.put(url, json=sent, auth=AUTH)
    assert created.status_code == 201
    assert created.headers["content-type"].startswith(OPDS_PROGRESSION[1])
    check_opds_document(created.json())
    assert created.json()["references"] == ["#page=4"]
    assert created.json()["device"] == sent["device"]
    got = await client.get(url, auth=AUTH)
    assert got.json() == created.json()
    # The same place, now shown to an OPDS 1.2 reader from 1, and to the Readium document.
    readium = (await client.get(link_of(chapter["links"], *READIUM), auth=AUTH)).json()
    assert readium["locator"]["locations"]["position"] == 4
    # Sending back what was read, or something newer, updates; something older is stale.
    assert (await client.put(url, json=got.json(), auth=AUTH)).status_code == 200
    newer = {**sent, "modified": stamp(now + timedelta(seconds=5)), "references": ["#page=6"]}
    updated = await client.put(url, json=newer, auth=AUTH)
    assert updated.status_code == 200
    # The last page, and the client's own share of the chapter, as it sent it.
    assert (updated.json()["position"], updated.json()["progression"]) == (6, 0.5)
    older = {**sent, "modified": stamp(now - timedelta(minutes=1)), "references": ["#page=2"]}
    stale = await client.put(url, json=older, auth=AUTH)
    assert stale.status_code == 409
    assert stale.headers["content-type"].startswith("application/problem+json")
    assert (await client.get(url, auth=AUTH)).json()["references"] == ["#page=6"]
    # Without a page reference, the share of the chapter places it.
    latest = {
        "modified": stamp(now + timedelta(seconds=9)),
        "device": sent["device"],
        "progression": 0.5,
    }
    assert (await client.put(url, json=latest, auth=AUTH)).json()["references"] == ["#page=4"]


async def test_bad_progression_bodies_are_problems(readers_host: ServedHost) -> None:
    client = readers_host.client  # no readers: the implicit one
    chapter, _ = await publication(client)
    now = stamp(datetime.now(UTC))
    for url, body in (
        (link_of(chapter["links"], *OPDS_PROGRESSION), b"not json"),
        (link_of(chapter["links"], *OPDS_PROGRESSION), b'{"modified": "yesterday"}'),
        (
            link_of(chapter["links"], *OPDS_PROGRESSION),
            f'{{"modified": "{now}", "device": {{"id": "urn:x", "name": "x"}}, "progression": 2}}'.encode(),
        ),
        (
            link_of(chapter["links"], *OPDS_PROGRESSION),
            f'{{"modified": "{now}", "device": {{"id": "urn:x", "name": "x"}}, "progression": 0.1, '
            f'"references": ["#page=99"]}}'.encode(),
        ),
        (link_of(chapter["links"], *READIUM), b"[]"),
        (
            link_of(chapter["links"], *READIUM),
            f'{{"modified": "{now}", "device": {{"id": "urn:x", "name": "x"}}, '
            f'"locator": {{"href": "p", "type": "image/jpeg", "locations": {{"position": 99}}}}}}'.encode(),
        ),
    ):
        answer = await client.put(url, content=body, auth=AUTH)
        assert answer.status_code == 400, (url, body)
        problem = answer.json()
        assert answer.headers["content-type"].startswith("application/problem+json")
        assert problem["status"] == 400 and problem["title"] and problem["detail"]


async def test_readium_progression_as_komga_serves_it(readers_host: ServedHost) -> None:
    await add_reader(readers_host, "ayumi", "correct horse")
    client = readers_host.client
    chapter, manifest = await publication(client)
    url = link_of(chapter["links"], *READIUM)
    assert link_of(manifest["links"], *READIUM) == url
    assert (await client.get(url, auth=AUTH)).status_code == 204
    now = datetime.now(UTC)
    page_three = manifest["readingOrder"][2]
    sent = {
        "modified": stamp(now),
        "device": {"id": "komelia-1", "name": "Komelia"},
        "locator": {
            "href": page_three["href"],
            "type": "image/jpeg",
            "locations": {"position": 3, "progression": 0, "totalProgression": 0.5},
        },
    }
    assert (await client.put(url, json=sent, auth=AUTH)).status_code == 204
    got = await client.get(url, auth=AUTH)
    assert got.status_code == 200
    assert got.headers["content-type"].startswith(READIUM[1])
    document = got.json()
    assert RFC3339.match(document["modified"])
    assert document["device"] == sent["device"]  # its own id, not one the host made up
    locator = document["locator"]
    assert locator["href"] == page_three["href"] and locator["type"] == "image/jpeg"
    assert locator["locations"]["position"] == 3
    assert locator["locations"]["totalProgression"] == 0.5  # as sent
    # The OPDS document tells the same page.
    opds = (await client.get(link_of(chapter["links"], *OPDS_PROGRESSION), auth=AUTH)).json()
    assert opds["references"] == ["#page=3"]
    older = {**sent, "modified": stamp(now - timedelta(hours=1))}
    assert (await client.put(url, json=older, auth=AUTH)).status_code == 409
