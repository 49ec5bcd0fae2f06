"""A misbehaving MangaDex, through the whole host: every fault is a clean 4xx/5xx in time.

Each fault of the upstream audit is scripted on the fake (which otherwise
speaks MangaDex's documented format) for the first upstream request of each
content endpoint, and the host must answer with the spec's code, a short
message free of the upstream's markup, and within the upstream deadline
plus a small margin: never a 500, never a hang.
"""

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from toshokan.sources.mangadex import MangaDex
from toshokan.testing import ServedHost, serve

from .fake import API, UPLOADS, FakeMangaDex
from .faults import COLLECTION, FAULTS, FIRST_CALL, Fault, ask

pytestmark = pytest.mark.anyio

DEADLINE = 1.5
#: Time the host may take beyond the deadline to answer (scheduling, a loaded machine).
MARGIN = 1.0


CASES = [
    pytest.param(fault, endpoint, id=f"{fault.name}-{endpoint}")
    for fault in FAULTS
    for endpoint in fault.endpoints
]


@pytest.fixture
async def host(fake: FakeMangaDex, tmp_path: Path) -> AsyncIterator[ServedHost]:
    options = {"api_url": API, "uploads_url": UPLOADS, "requests_per_second": 20}
    async with serve(
        MangaDex,
        options,
        slug="mangadex",
        upstream=fake.transport(),
        data_dir=tmp_path,
        server={"upstream_timeout": DEADLINE},
        cache={"search": 0, "manga": 0, "chapters": 0},
    ) as served:
        yield served


@pytest.mark.parametrize(("fault", "endpoint"), CASES)
async def test_fault_is_mapped_within_the_deadline(
    fake: FakeMangaDex, host: ServedHost, fault: Fault, endpoint: str
) -> None:
    manga = fake.add_manga("m", "M")
    chapter = fake.add_chapter(manga, "1")
    fake.script(FIRST_CALL[endpoint], times=100, **fault.recipe(endpoint))

    started = time.monotonic()
    answer = await ask(host, endpoint, manga.id, chapter.id)
    took = time.monotonic() - started

    assert took < DEADLINE + MARGIN
    assert answer.status_code == fault.status, answer.text
    error = answer.json()["error"]
    assert error["code"] == fault.code
    assert "<" not in error["message"] and len(error["message"]) < 400


async def test_a_long_retry_hint_is_passed_on_at_once(fake: FakeMangaDex, host: ServedHost) -> None:
    fake.script(FIRST_CALL["search"], status=429, headers={"Retry-After": "3600"})
    started = time.monotonic()
    answers = await asyncio.gather(
        *(
            host.client.post("/mangadex/search", json={"page": p, "sort": "latest"})
            for p in range(1, 31)
        )
    )
    assert time.monotonic() - started < MARGIN
    assert {a.status_code for a in answers} == {429}
    assert {a.headers["Retry-After"] for a in answers} == {"3600"}
    assert len(fake.calls(FIRST_CALL["search"])) == 1  # the others were not sent


async def test_callers_queued_for_the_budget_get_a_long_hint_at_once(
    fake: FakeMangaDex, tmp_path: Path
) -> None:
    # One request a second: the first search is sent, the nine others queue for the budget,
    # and MangaDex takes 0.7 s to say "not for an hour".
    options = {"api_url": API, "uploads_url": UPLOADS, "requests_per_second": 1}
    fake.script(
        FIRST_CALL["search"], status=429, headers={"Retry-After": "3600"}, delay=0.7, times=100
    )
    async with serve(
        MangaDex,
        options,
        slug="mangadex",
        upstream=fake.transport(),
        data_dir=tmp_path,
        server={"upstream_timeout": 10},
        cache={"search": 0},
    ) as host:
        started = time.monotonic()
        answers = await asyncio.gather(
            *(
                host.client.post("/mangadex/search", json={"page": p, "sort": "latest"})
                for p in range(1, 11)
            )
        )
        took = time.monotonic() - started
    assert [a.status_code for a in answers] == [429] * 10
    assert {a.json()["error"]["code"] for a in answers} == {"RATE_LIMITED"}
    assert all(3500 <= int(a.headers["Retry-After"]) <= 3600 for a in answers)
    assert len(fake.calls(FIRST_CALL["search"])) == 1  # the queued nine were not sent
    assert took < 5  # half the deadline: nobody waited it out


async def test_a_feed_claiming_ten_thousand_items_costs_a_bounded_number_of_requests(
    fake: FakeMangaDex, host: ServedHost
) -> None:
    manga = fake.add_manga("m", "M")
    fake.add_chapter(manga, "1")
    # One real chapter, re-served on every page under a claim of 10,000 at one a page.
    page = (await host.source("mangadex").feed_page(manga.id)(0, 1))["data"]
    assert len(page) == 1
    fake.requests.clear()
    fake.script(
        r"/feed$",
        status=200,
        times=100_000,
        raw=COLLECTION.replace(b'"limit":10', b'"limit":1')
        + b'"data":[{"id":"'
        + page[0]["id"].encode()
        + b'","type":"chapter","attributes":{"chapter":"1"},"relationships":[]}],"total":10000}',
    )
    started = time.monotonic()
    answer = await host.client.get(f"/mangadex/{manga.id}/chapters")
    assert time.monotonic() - started < DEADLINE + MARGIN
    assert answer.status_code == 200
    assert len(answer.json()) == 1
    assert len(fake.calls(r"/feed$")) <= 20  # MangaDex's 10,000 window in pages of 500


async def test_work_stops_when_the_client_leaves(fake: FakeMangaDex, host: ServedHost) -> None:
    manga = fake.add_manga("m", "M")
    fake.script(r"/feed$", status=200, delay=0.5, times=100)
    leaving = asyncio.create_task(host.client.get(f"/mangadex/{manga.id}/chapters"))
    await asyncio.sleep(0.2)
    leaving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await leaving
    sent = len(fake.requests)
    await asyncio.sleep(DEADLINE)
    assert len(fake.requests) == sent
