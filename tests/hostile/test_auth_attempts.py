"""Guessing credentials is bounded on every path that checks them, per client and source.

The limit (``[limits] auth_attempts``, 10 a minute by default) counts each
credential check that fails: ``/authenticate``, content requests carrying auth
headers, and signed page links with a forged signature. Concurrent guesses are
counted before they are evaluated, and once a client is over the limit it is
refused even with right credentials until the window passes; other clients
are not affected.
"""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest

from tests.helpers.catalog import SECRETS
from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio

LIMIT = 10  # the default [limits] auth_attempts
GUESSER = "203.0.113.7"  # make_host's client
READER = "198.51.100.20"
PAGE = "/_/catalog/pages/1"
GOOD_KEY = {"X-API-Key": SECRETS["apiKey"]}
SEARCH = {"page": 1, "sort": "title"}


@asynccontextmanager
async def client_at(host: ServedHost, address: str) -> AsyncIterator[httpx.AsyncClient]:
    """Another client of the same running host, from another address."""
    transport = httpx.ASGITransport(app=host.app, client=(address, 1234))
    async with httpx.AsyncClient(transport=transport, base_url="http://testhost") as client:
        yield client


def assert_rate_limited(answer: httpx.Response) -> None:
    assert answer.status_code == 429, answer.text[:300]
    assert answer.json()["error"]["code"] == "RATE_LIMITED"
    assert int(answer.headers["retry-after"]) >= 1


async def test_concurrent_wrong_passwords_are_evaluated_at_most_the_limit(make_host):
    async with make_host(
        auth="basic", required=True, limits={"rate_limit": 0, "auth_attempts": LIMIT}
    ) as host:
        catalog = host.source("catalog")
        catalog.conf.verify_delay = 0.01  # an upstream check takes time: the guesses overlap
        guesses = [{"username": "reader", "password": f"guess-{n}"} for n in range(60)]
        answers = await asyncio.gather(
            *(host.client.post("/catalog/authenticate", json=guess) for guess in guesses)
        )
        evaluated = catalog.calls.get("verify", 0)
    statuses = [answer.status_code for answer in answers]
    assert evaluated <= LIMIT
    assert statuses.count(401) == evaluated
    assert statuses.count(429) == 60 - evaluated
    for answer in answers:
        if answer.status_code == 429:
            assert answer.json()["success"] is False
            assert answer.json()["error"]["code"] == "RATE_LIMITED"
            assert int(answer.headers["retry-after"]) >= 1


async def wrong_guesses(client: httpx.AsyncClient, count: int = LIMIT) -> list[httpx.Response]:
    """``count`` failed checks spread over every path that checks credentials."""
    answers = []
    for n in range(count):
        wrong = {"X-API-Key": f"guess-{n}"}
        match n % 5:
            case 0:
                answers.append(await client.post("/catalog/search", json=SEARCH, headers=wrong))
            case 1:
                answers.append(await client.get("/catalog/title-001", headers=wrong))
            case 2:
                answers.append(await client.get("/catalog/title-001/chapters", headers=wrong))
            case 3:
                answers.append(await client.get("/catalog/title-001/chapters/c1", headers=wrong))
            case 4:
                answers.append(await client.get(f"{PAGE}?exp=9999999999&sig={n:040x}"))
    return answers


async def right_answers(client: httpx.AsyncClient, signed_page: str) -> list[httpx.Response]:
    """Every path again, with right credentials or a genuine signature."""
    return [
        await client.post("/catalog/search", json=SEARCH, headers=GOOD_KEY),
        await client.get("/catalog/title-001", headers=GOOD_KEY),
        await client.get("/catalog/title-001/chapters", headers=GOOD_KEY),
        await client.get("/catalog/title-001/chapters/c1", headers=GOOD_KEY),
        await client.get(signed_page),
        await client.get(PAGE, headers=GOOD_KEY),
        await client.post("/catalog/authenticate", json={"apiKey": SECRETS["apiKey"]}),
    ]


async def test_wrong_credentials_anywhere_spend_one_budget(make_host):
    async with make_host(
        auth="api_key", required=True, limits={"rate_limit": 0, "auth_attempts": LIMIT}
    ) as host:
        signed_page = host.services.urls("").source_route("catalog", "/pages/1")
        async with client_at(host, READER) as reader:
            # A reader is reading with the right key: the host remembers it was accepted.
            assert (await reader.get("/catalog/title-001", headers=GOOD_KEY)).status_code == 200
            guesses = await wrong_guesses(host.client)
            served_before = dict(host.source("catalog").calls)
            refused = await right_answers(host.client, signed_page)
            served_after = dict(host.source("catalog").calls)
            others = await right_answers(reader, signed_page)
    for guess in guesses:
        assert guess.status_code == 401, guess.text[:300]
        assert guess.json()["error"]["code"] == "INVALID_CREDENTIALS"
    for answer in refused:
        assert_rate_limited(answer)
    assert served_after == served_before  # nothing reached the adapter for the guesser
    assert [answer.status_code for answer in others] == [200] * len(others)


async def test_a_guesser_under_the_limit_is_still_served(make_host):
    async with make_host(
        auth="api_key", required=True, limits={"rate_limit": 0, "auth_attempts": LIMIT}
    ) as host:
        signed_page = host.services.urls("").source_route("catalog", "/pages/1")
        guesses = await wrong_guesses(host.client, LIMIT - 1)
        assert all(guess.status_code == 401 for guess in guesses)
        last = await host.client.get(signed_page)
    assert last.status_code == 200


@pytest.mark.parametrize(
    "expiry",
    ["%C2%B2", "²", "%D9%A1%D9%A2%D9%A3", "١٢٣٤٥٦٧٨٩٠", "%EF%BC%99%EF%BC%99", "9²", "-1", "1e9"],
)
async def test_non_ascii_digits_in_an_expiry_are_a_4xx(make_host, expiry):
    async with make_host(auth="api_key", required=True, limits={"rate_limit": 0}) as host:
        image = "http://img.catalog.example/a.png"
        answers = [
            await host.client.get(f"{PAGE}?exp={expiry}&sig={'0' * 40}"),
            await host.client.get(f"/_/image/catalog?u={image}&exp={expiry}&sig={'0' * 40}"),
        ]
    for answer in answers:
        assert answer.status_code == 401, answer.text[:300]
        assert answer.json()["error"]["code"] == "INVALID_CREDENTIALS"
