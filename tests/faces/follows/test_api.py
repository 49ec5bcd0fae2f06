"""Following a MangaDex series through the follows API, as the web reader does."""

import asyncio
import time
from datetime import timedelta
from typing import Any

import pytest

from tests.sources.mangadex.fake import T0, FakeMangaDex
from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio


def pirates(fake: FakeMangaDex) -> str:
    return next(m.id for m in fake.manga.values() if m.title["en"] == "Pirate Voyage")


async def until(condition: Any, seconds: float = 20) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        found = await condition()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError("not within the time")
        await asyncio.sleep(0.1)


async def followed_state(host: ServedHost, manga: str) -> str:
    answer = await host.client.get(f"/_/follows/series/mangadex/{manga}")
    assert answer.status_code == 200, answer.text
    state: str = answer.json()["state"]
    return state


async def test_a_new_chapter_is_found_shown_and_read(host: ServedHost, fake: FakeMangaDex) -> None:
    manga = pirates(fake)
    followed = await host.client.put(f"/_/follows/series/mangadex/{manga}")
    assert followed.status_code == 201, followed.text
    assert followed.json()["title"] == "Pirate Voyage"
    # The first check records what exists: nothing is new.
    await until(lambda: _is(followed_state(host, manga), "ok"))
    assert (await host.client.get("/_/follows/updates")).json()["updates"] == []

    await asyncio.sleep(1.1)  # a series is checked on demand once a round at most
    listed = await host.client.get(f"/mangadex/{manga}/chapters")  # kept by the host a while
    assert len(listed.json()) == 3
    chapter = fake.add_chapter(
        fake.manga[manga], "4", title="Landfall", publish_at=T0 + timedelta(days=30)
    )
    checking = await host.client.post("/_/follows/checks", json={})
    assert checking.status_code == 202
    batch = checking.json()["batch"]

    async def finished() -> bool:
        status = (await host.client.get(f"/_/follows/checks/{batch}")).json()
        return status["finished"] is not None

    await until(finished)
    updates = (await host.client.get("/_/follows/updates")).json()["updates"]
    assert [(u["chapter"], u["kind"], u["unread"]) for u in updates] == [
        (chapter.id, "chapter", True)
    ]
    follows = (await host.client.get("/_/follows")).json()["follows"]
    assert [(f["manga"], f["unread"]) for f in follows] == [(manga, 1)]
    # What the check found is what a reader opening the series is answered.
    listed = await host.client.get(f"/mangadex/{manga}/chapters")
    assert chapter.id in [c["slug"] for c in listed.json()]

    marked = await host.client.post("/_/follows/read", json={"all": True})
    assert marked.json() == {"marked": 1}
    updates = (await host.client.get("/_/follows/updates")).json()["updates"]
    assert [u["unread"] for u in updates] == [False]
    assert (await host.client.get("/_/follows/updates?unread=1")).json()["updates"] == []


async def _is(state: Any, wanted: str) -> bool:
    return bool(await state == wanted)


async def test_bad_input_is_refused_and_nothing_is_kept(
    host: ServedHost, fake: FakeMangaDex
) -> None:
    unknown = "00000000-0000-0000-0000-000000000000"
    answer = await host.client.put(f"/_/follows/series/mangadex/{unknown}")
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "MANGA_NOT_FOUND"
    answer = await host.client.put(f"/_/follows/series/nowhere/{unknown}")
    assert answer.json()["error"]["code"] == "SOURCE_NOT_FOUND"
    answer = await host.client.post("/_/follows/targets", json={"url": "nonsense://x"})
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "INVALID_REQUEST"
    answer = await host.client.post("/_/follows/read", json={"chapters": "all"})
    assert answer.status_code == 400
    assert (await host.client.get("/_/follows")).json() == {"follows": []}
    assert (await host.client.get("/_/follows/targets")).json() == {"targets": []}


async def test_checking_all_asks_once_for_every_series_and_reads_the_one_that_moved(
    host: ServedHost, fake: FakeMangaDex
) -> None:
    """ "Check now" of everything a reader follows is one job for the source's series: one list
    of titles by id, and the feed of the series whose latest chapter moved only."""
    for manga in fake.manga:
        assert (await host.client.put(f"/_/follows/series/mangadex/{manga}")).status_code == 201
    for manga in fake.manga:
        await until(lambda manga=manga: _is(followed_state(host, manga), "ok"))
    manga = pirates(fake)
    await asyncio.sleep(1.1)  # a series is checked on demand once a round at most
    # What the first checks read did not include the series' marks: this check reads both.
    await check_all(host)
    before = len(fake.requests)
    await asyncio.sleep(1.1)
    fake.add_chapter(fake.manga[manga], "4", title="Landfall", publish_at=T0 + timedelta(days=30))
    await check_all(host)
    asked = fake.requests[before:]
    lists = [sorted(r.values("ids[]")) for r in asked if r.path == "/manga"]
    feeds = [r.path for r in asked if r.path.endswith("/feed")]
    assert (lists, feeds) == ([sorted(fake.manga)], [f"/manga/{manga}/feed"])
    updates = (await host.client.get("/_/follows/updates")).json()["updates"]
    assert [(u["manga"], u["kind"]) for u in updates] == [(manga, "chapter")]


async def check_all(host: ServedHost) -> None:
    checking = await host.client.post("/_/follows/checks", json={})
    assert checking.status_code == 202
    batch = checking.json()["batch"]

    async def finished() -> bool:
        status = (await host.client.get(f"/_/follows/checks/{batch}")).json()
        return status["finished"] is not None and status["checked"] == len(
            (await host.client.get("/_/follows")).json()["follows"]
        )

    await until(finished)


async def test_a_target_names_its_series_as_source_and_manga_slugs(host: ServedHost) -> None:
    url = "json://127.0.0.1:9/hooks"
    for series in (["mangadex"], ["mangadex/a/b"], ["MangaDex/abc"], ["mangadex/Abc"], ["/abc"]):
        answer = await host.client.post("/_/follows/targets", json={"url": url, "series": series})
        assert answer.status_code == 400, series
        assert answer.json()["error"]["code"] == "INVALID_REQUEST"
    chosen = ["mangadex/pirate-voyage_2", "local/0-a"]
    made = await host.client.post("/_/follows/targets", json={"url": url, "series": chosen})
    assert made.status_code == 201 and sorted(made.json()["series"]) == sorted(chosen)
