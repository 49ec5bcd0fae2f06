"""A host with readers: the catalogue asks who reads, as OPDS readers sign in (Basic, X-API-Key)."""

import asyncio

import pytest

from tests.helpers.hosts import add_reader
from toshokan.core.readers import gate
from toshokan.testing import ServedHost

from .servers import ATTEMPTS

pytestmark = pytest.mark.anyio

AUTH_DOCUMENT = "application/opds-authentication+json"


FEEDS = ("/_/opds", "/_/opds/local", "/_/opds/v2", "/_/opds/v2/local", "/_/opds/_search?q=a")


async def test_without_credentials_a_reader_is_asked_to_sign_in(readers_host: ServedHost) -> None:
    await add_reader(readers_host, "ayumi", "correct horse")
    for url in FEEDS:
        answer = await readers_host.client.get(url)
        assert answer.status_code == 401, url
        assert answer.headers["www-authenticate"].startswith("Basic realm=")
        assert answer.headers["content-type"].startswith(AUTH_DOCUMENT)
        link = answer.headers["link"]
        assert 'rel="http://opds-spec.org/auth/document"' in link
        document_url = link[link.index("<") + 1 : link.index(">")]
        document = await readers_host.client.get(document_url)  # open to anyone, as required
        assert document.status_code == 200
        assert document.headers["content-type"].startswith(AUTH_DOCUMENT)
        flows = document.json()["authentication"]
        assert flows[0]["type"] == "http://opds-spec.org/auth/basic"
        assert document.json()["id"] == document_url


async def test_wrong_credentials_are_refused(readers_host: ServedHost) -> None:
    key = await add_reader(readers_host, "ayumi", "correct horse")
    wrong_key = key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB")
    client = readers_host.client
    for answer in (
        await client.get("/_/opds/local", auth=("ayumi", "wrong")),
        await client.get("/_/opds/local", auth=("nobody", "correct horse")),
        await client.get("/_/opds/local", auth=("ayumi", wrong_key)),
        await client.get("/_/opds/local", headers={"X-API-Key": wrong_key}),
    ):
        assert answer.status_code == 401


async def test_a_password_or_an_api_key_signs_in(readers_host: ServedHost) -> None:
    key = await add_reader(readers_host, "ayumi", "correct horse")
    client = readers_host.client
    for url in FEEDS:
        assert (await client.get(url, auth=("ayumi", "correct horse"))).status_code == 200
        assert (await client.get(url, auth=("ayumi", key))).status_code == 200
        assert (await client.get(url, headers={"X-API-Key": key})).status_code == 200


async def test_wrong_guesses_spend_the_attempt_budget(readers_host: ServedHost) -> None:
    key = await add_reader(readers_host, "ayumi", "correct horse")
    client = readers_host.client
    for _ in range(ATTEMPTS):
        answer = await client.get("/_/opds/local", auth=("ayumi", "guess"))
        assert answer.status_code == 401
    # Asking without credentials, as every reader does first, spends nothing...
    assert (await client.get("/_/opds")).status_code == 401
    # ...but the guesser is now stopped, even with a key that would be right.
    for limited in (
        await client.get("/_/opds/local", auth=("ayumi", "guess")),
        await client.get("/_/opds/local", headers={"X-API-Key": key}),
    ):
        assert limited.status_code == 429
        assert "retry-after" in limited.headers


async def test_without_readers_the_catalogue_stays_open(readers_host: ServedHost) -> None:
    for url in FEEDS:
        assert (await readers_host.client.get(url)).status_code == 200


async def test_readers_added_and_removed_while_serving_are_seen_at_once(
    readers_host: ServedHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether the host has readers is remembered, and forgotten when they change: not after a
    while (remembered for an hour here), at once."""
    monkeypatch.setattr(gate, "READERS_SECONDS", 3600.0)
    client = readers_host.client
    assert (await client.get("/_/opds/local")).status_code == 200  # open: no readers yet
    await add_reader(readers_host, "ayumi", "correct horse")
    assert (await client.get("/_/opds/local")).status_code == 401
    assert (await client.get("/_/komga/api/v1/libraries")).status_code == 401
    assert (await client.get("/_/opds/local", auth=("ayumi", "correct horse"))).status_code == 200
    await asyncio.to_thread(readers_host.core.readers.readers.remove, "ayumi")
    assert (await client.get("/_/opds/local")).status_code == 200  # open again
