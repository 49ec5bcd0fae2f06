"""Keeping a series through the follows API and steering its downloads through the downloads
API, as the web reader does: a reader sees and steers their own, an operator all of them."""

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.core.downloads.queue import check_now, keeping_host, pirates, until
from tests.helpers.hosts import add_reader
from tests.sources.mangadex.fake import T0, FakeMangaDex
from tests.sources.mangadex.image_servers import ImageServers
from tests.sources.mangadex.sample import two_series
from toshokan.core.keeping.shelf import Draft, Staged
from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio


@pytest.fixture
def fake() -> FakeMangaDex:
    return two_series()


@pytest.fixture
async def host(
    fake: FakeMangaDex, tmp_path: Path, database_url: str | None
) -> AsyncIterator[ServedHost]:
    library = tmp_path / "library"
    library.mkdir()
    async with keeping_host(
        ImageServers(fake), library, tmp_path / "data", database_url, operators=["mika"]
    ) as served:
        yield served


def basic(name: str) -> httpx.BasicAuth:
    return httpx.BasicAuth(name, "hunter22")


async def follow(host: ServedHost, manga: str, who: str) -> None:
    answer = await host.client.put(f"/_/follows/series/mangadex/{manga}", auth=basic(who))
    assert answer.status_code == 201, answer.text

    async def checked() -> bool:
        found = await host.client.get(f"/_/follows/series/mangadex/{manga}", auth=basic(who))
        return bool(found.json()["state"] == "ok")

    await until(checked)


async def queue(host: ServedHost, who: str, **query: str) -> dict[str, Any]:
    answer = await host.client.get("/_/downloads", params=query, auth=basic(who))
    assert answer.status_code == 200, answer.text
    assert answer.headers["cache-control"] == "no-store"
    body: dict[str, Any] = answer.json()
    return body


async def test_keep_steer_and_see_only_your_own(host: ServedHost, fake: FakeMangaDex) -> None:
    for name in ("mika", "ren"):
        await add_reader(host, name, "hunter22")
    manga = pirates(fake)
    await follow(host, manga, "ren")
    await host.core.downloads.pause(None)  # so the queue stands still while it is steered
    wish = {"languages": ["en"], "backfill": 3}
    kept = await host.client.put(
        f"/_/follows/series/mangadex/{manga}/keep", json=wish, auth=basic("ren")
    )
    assert kept.status_code == 201, kept.text
    assert kept.json()["backfill"] == 3 and kept.json()["languages"] == ["en"]
    again = await host.client.put(
        f"/_/follows/series/mangadex/{manga}/keep", json=wish, auth=basic("ren")
    )
    assert again.status_code == 200
    assert (
        await host.client.get(f"/_/follows/series/mangadex/{manga}/keep", auth=basic("ren"))
    ).json()["groups"] == []

    shown = await queue(host, "ren")
    assert shown["operator"] is False
    assert shown["queue"]["paused"] == "operator"
    assert [d["number"] for d in shown["downloads"]] == [1.0, 2.0, 3.0]
    assert shown["counts"] == {"queued": 3}
    assert shown["progress"] == {"kept": 0, "waiting": 3, "share": 0.0}
    first, second, third = (d["id"] for d in shown["downloads"])
    # Reordered: the third first; held, cancelled, retried.
    moved = await host.client.post(
        f"/_/downloads/{third}", json={"action": "top"}, auth=basic("ren")
    )
    assert moved.status_code == 200, moved.text
    assert [d["id"] for d in (await queue(host, "ren"))["downloads"]] == [third, first, second]
    down = await host.client.post(
        f"/_/downloads/{third}", json={"action": "down"}, auth=basic("ren")
    )
    assert down.status_code == 200
    assert [d["id"] for d in (await queue(host, "ren"))["downloads"]] == [first, third, second]
    held = await host.client.post(
        f"/_/downloads/{first}", json={"action": "hold"}, auth=basic("ren")
    )
    assert held.json()["state"] == "held"
    cancelled = await host.client.post(
        f"/_/downloads/{second}", json={"action": "cancel"}, auth=basic("ren")
    )
    assert cancelled.json()["state"] == "cancelled"
    refused = await host.client.post(
        f"/_/downloads/{second}", json={"action": "hold"}, auth=basic("ren")
    )
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "INVALID_REQUEST"
    # Another reader sees none of it; the operator all of it, and alone pauses the queue.
    await add_reader(host, "sora", "hunter22")
    assert (await queue(host, "sora"))["downloads"] == []
    hidden = await host.client.post(
        f"/_/downloads/{first}", json={"action": "cancel"}, auth=basic("sora")
    )
    assert hidden.status_code == 404
    operator = await queue(host, "mika")
    assert operator["operator"] is True and len(operator["downloads"]) == 3
    not_yours = await host.client.put(
        "/_/downloads/queue", json={"paused": False, "own": False}, auth=basic("ren")
    )
    assert not_yours.status_code == 400
    assert "[keep] operators" in not_yours.json()["error"]["message"]
    resumed = await host.client.put(
        "/_/downloads/queue", json={"paused": False}, auth=basic("mika")
    )
    assert resumed.status_code == 200 and resumed.json()["paused"] is None
    released = await host.client.post(
        f"/_/downloads/{first}", json={"action": "release"}, auth=basic("ren")
    )
    assert released.json()["state"] == "queued"

    async def kept_both() -> dict[str, Any] | None:
        shown = await queue(host, "ren")
        return shown if shown["counts"].get("done") == 2 else None

    done = await until(kept_both)
    assert done["progress"]["share"] == 1.0
    assert all(d["pagesDone"] == d["pages"] == 3 for d in done["downloads"] if d["state"] == "done")


async def test_bad_input_is_refused_and_nothing_is_kept(
    host: ServedHost, fake: FakeMangaDex
) -> None:
    manga = pirates(fake)
    path = f"/_/follows/series/mangadex/{manga}/keep"
    not_followed = await host.client.put(path, json={})
    assert not_followed.status_code == 404
    await follow_anyone(host, manga)
    bodies: list[Any] = [
        {"backfill": -1},
        {"backfill": 5000},
        {"languages": ["x" * 200]},
        {"groups": ["a"] * 50},
        {"onlyUnread": "yes"},
        {"colour": "red"},
        [],
    ]
    for body in bodies:
        refused = await host.client.put(path, json=body)
        assert refused.status_code == 400, (body, refused.text)
        assert refused.json()["error"]["code"] == "INVALID_REQUEST"
    assert (await host.client.get(path)).status_code == 404
    library = await host.client.put("/_/follows/series/local/anything/keep", json={})
    assert library.status_code == 400
    assert "the library kept copies go to" in library.json()["error"]["message"]
    for bad in ("/_/downloads?limit=0", "/_/downloads?mine=2", "/_/downloads?offset=-1"):
        assert (await host.client.get(bad)).status_code == 400
    assert (await host.client.get("/_/downloads/" + "f" * 32)).status_code == 404
    assert (await host.client.get("/_/downloads/" + "f" * 300)).status_code == 404
    steer = await host.client.post("/_/downloads/" + "f" * 32, json={"action": "explode"})
    assert steer.status_code == 400
    assert (await queue_anyone(host))["downloads"] == []


async def test_a_new_chapter_kept_shows_its_progress(host: ServedHost, fake: FakeMangaDex) -> None:
    manga = pirates(fake)
    await follow_anyone(host, manga)
    assert (
        await host.client.put(f"/_/follows/series/mangadex/{manga}/keep", json={})
    ).status_code == 201
    chapter = fake.add_chapter(
        fake.manga[manga], "4", title="Landfall", publish_at=T0 + timedelta(days=30)
    )
    await check_now(host, manga)

    async def done() -> list[dict[str, Any]] | None:
        rows = (await queue_anyone(host))["downloads"]
        return rows if rows and rows[0]["state"] == "done" else None

    (row,) = await until(done)
    assert (row["chapter"], row["pagesDone"], row["pages"]) == (chapter.id, 3, 3)
    assert row["path"].endswith(".cbz") and row["bytes"] > 0
    figures = (await host.client.get("/_/metrics")).text
    assert 'toshokan_kept_chapters_total{source="mangadex"} 1.0' in figures
    assert f'toshokan_kept_bytes_total{{source="mangadex"}} {float(row["bytes"])}' in figures
    assert "toshokan_downloads_paused 0.0" in figures
    unkept = await host.client.delete(f"/_/follows/series/mangadex/{manga}/keep")
    assert unkept.status_code == 204
    await asyncio.sleep(0)


async def follow_anyone(host: ServedHost, manga: str) -> None:
    assert (await host.client.put(f"/_/follows/series/mangadex/{manga}")).status_code == 201

    async def checked() -> bool:
        found = await host.client.get(f"/_/follows/series/mangadex/{manga}")
        return bool(found.json()["state"] == "ok")

    await until(checked)


async def queue_anyone(host: ServedHost) -> dict[str, Any]:
    answer = await host.client.get("/_/downloads")
    assert answer.status_code == 200
    body: dict[str, Any] = answer.json()
    return body


async def test_keep_every_series_followed_from_a_source(
    host: ServedHost, fake: FakeMangaDex
) -> None:
    for name in ("mika", "ren"):
        await add_reader(host, name, "hunter22")
    manga = pirates(fake)
    await follow(host, manga, "ren")
    path = "/_/follows/sources/mangadex/keep"
    assert (await host.client.get(path, auth=basic("ren"))).status_code == 404
    wish = {"languages": ["en"], "onlyUnread": True}
    kept = await host.client.put(path, json=wish, auth=basic("ren"))
    assert kept.status_code == 201, kept.text
    assert kept.json()["source"] == "mangadex" and kept.json()["languages"] == ["en"]
    assert (await host.client.put(path, json=wish, auth=basic("ren"))).status_code == 200
    shown = (await host.client.get(path, auth=basic("ren"))).json()
    assert (shown["onlyUnread"], shown["groups"]) == (True, [])
    # Not mika's: each reader keeps what they follow.
    assert (await host.client.get(path, auth=basic("mika"))).status_code == 404

    chapter = fake.add_chapter(
        fake.manga[manga], "4", title="Landfall", publish_at=T0 + timedelta(days=30)
    )
    await asyncio.sleep(1.1)  # a series is checked on demand once a round at most
    await host.core.follows.check_now("ren", ("mangadex", manga))

    async def done() -> list[dict[str, Any]] | None:
        rows = (await queue(host, "ren"))["downloads"]
        return rows if rows and rows[0]["state"] == "done" else None

    (row,) = await until(done)  # ren sees it as theirs
    assert row["chapter"] == chapter.id
    assert (await host.client.delete(path, auth=basic("ren"))).status_code == 204
    assert (await host.client.delete(path, auth=basic("ren"))).status_code == 404
    assert (await host.client.get(path, auth=basic("ren"))).status_code == 404


async def test_keep_every_series_refuses_bad_input_and_stores_nothing(
    host: ServedHost, fake: FakeMangaDex
) -> None:
    path = "/_/follows/sources/mangadex/keep"
    bodies: list[Any] = [{"backfill": 2}, {"languages": [""]}, {"groups": ["a"] * 50}, []]
    for body in bodies:
        refused = await host.client.put(path, json=body)
        assert refused.status_code == 400, (body, refused.text)
        assert refused.json()["error"]["code"] == "INVALID_REQUEST"
    unknown = await host.client.put("/_/follows/sources/nowhere/keep", json={})
    assert unknown.status_code == 404
    assert "nowhere" in unknown.json()["error"]["message"]
    assert (await host.client.put("/_/follows/sources/" + "x" * 300 + "/keep")).status_code in (
        400,
        404,
    )
    library = await host.client.put("/_/follows/sources/local/keep", json={})
    assert library.status_code == 400
    assert (await host.client.get(path)).status_code == 404
    assert await asyncio.to_thread(host.core.downloads.store.keeps) == []


async def test_keep_every_series_of_a_source_the_operator_does_not_keep_is_refused(
    fake: FakeMangaDex, tmp_path: Path, database_url: str | None
) -> None:
    library = tmp_path / "library"
    library.mkdir()
    async with keeping_host(
        ImageServers(fake), library, tmp_path / "data", database_url, sources=["other"]
    ) as host:
        refused = await host.client.put("/_/follows/sources/mangadex/keep", json={})
        assert refused.status_code == 400
        assert "[keep] sources" in refused.json()["error"]["message"]
        assert (await host.client.get("/_/follows/sources/mangadex/keep")).status_code == 404


async def test_a_reader_pauses_their_own_downloads_and_no_one_else_s(
    host: ServedHost, fake: FakeMangaDex
) -> None:
    """ren pauses their downloads: their series wait, while sora's run, and so does a series
    both keep (it runs for sora); the host's queue is not paused; ren resumes, and theirs are
    kept."""
    for name in ("mika", "ren", "sora"):
        await add_reader(host, name, "hunter22")
    pirates_id = pirates(fake)
    sky = next(m for m in fake.manga.values() if m.title["en"] == "Sky Garden")
    fake.add_many_chapters(sky, 2, next(iter(fake.groups.values())))
    await follow(host, pirates_id, "ren")
    for who in ("ren", "sora"):
        await follow(host, sky.id, who)

    paused = await host.client.put("/_/downloads/queue", json={"paused": True}, auth=basic("ren"))
    assert paused.status_code == 200, paused.text
    assert paused.json()["paused"] == "reader"
    shown = await queue(host, "ren")
    assert shown["own"]["paused"] == "reader" and shown["queue"]["paused"] is None
    assert (await queue(host, "sora"))["own"]["paused"] is None
    for who, manga, backfill in (("ren", pirates_id, 3), ("ren", sky.id, 2), ("sora", sky.id, 2)):
        kept = await host.client.put(
            f"/_/follows/series/mangadex/{manga}/keep", json={"backfill": backfill}, auth=basic(who)
        )
        assert kept.status_code == 201, kept.text

    async def sora_kept() -> dict[str, Any] | None:
        shown = await queue(host, "sora")
        return shown if shown["counts"].get("done") == 2 else None

    await until(sora_kept)
    # ren's own series waited, first in the queue as they were; the shared one ran for sora.
    ren = await queue(host, "ren")
    by_series = {(d["manga"], d["state"]) for d in ren["downloads"]}
    assert by_series == {(pirates_id, "queued"), (sky.id, "done")}
    assert (await queue(host, "mika"))["queue"]["paused"] is None

    resumed = await host.client.put("/_/downloads/queue", json={"paused": False}, auth=basic("ren"))
    assert resumed.status_code == 200 and resumed.json()["paused"] is None

    async def ren_kept() -> dict[str, Any] | None:
        shown = await queue(host, "ren")
        return shown if shown["counts"].get("done") == 5 else None

    assert (await until(ren_kept))["own"]["paused"] is None
    # The operator still pauses the whole queue, and may pause their own alone.
    host_wide = await host.client.put(
        "/_/downloads/queue", json={"paused": True}, auth=basic("mika")
    )
    assert host_wide.json()["paused"] == "operator"
    own = await host.client.put(
        "/_/downloads/queue", json={"paused": True, "own": True}, auth=basic("mika")
    )
    assert own.json()["paused"] == "reader"
    shown = await queue(host, "mika")
    assert (shown["queue"]["paused"], shown["own"]["paused"]) == ("operator", "reader")


async def test_cancel_and_keeping_decide_once(
    host: ServedHost, fake: FakeMangaDex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancel that comes while a chapter is put together wins: nothing reaches the library.
    One that comes while it is moved into place is too late (409): the chapter is kept, and
    the queue says so. Never a kept file behind a cancelled row."""
    manga = pirates(fake)
    await follow_anyone(host, manga)
    await host.core.downloads.pause(None)
    kept = await host.client.put(f"/_/follows/series/mangadex/{manga}/keep", json={"backfill": 2})
    assert kept.status_code == 201
    answers: dict[str, httpx.Response] = {}

    async def cancel(number: float) -> httpx.Response:
        rows = (await queue_anyone(host))["downloads"]
        (row,) = (d for d in rows if d["number"] == number)
        return await host.client.post(f"/_/downloads/{row['id']}", json={"action": "cancel"})

    assemble, publish = Draft.assemble, Draft.publish

    async def assembled(draft: Draft, comicinfo: bytes) -> Staged:
        if b"<Number>2</Number>" in comicinfo:
            answers["early"] = await cancel(2.0)
        return await assemble(draft, comicinfo)

    async def published(draft: Draft, staged: Staged, relative: str) -> Path:
        if "Ch.3" in relative:
            answers["late"] = await cancel(3.0)
        return await publish(draft, staged, relative)

    monkeypatch.setattr(Draft, "assemble", assembled)
    monkeypatch.setattr(Draft, "publish", published)
    await host.core.downloads.resume(None)

    async def finished() -> list[dict[str, Any]] | None:
        rows = (await queue_anyone(host))["downloads"]
        states = {d["number"]: d["state"] for d in rows}
        return rows if states == {2.0: "cancelled", 3.0: "done"} else None

    rows = await until(finished)
    assert answers["early"].status_code == 200
    assert answers["early"].json()["state"] == "cancelled"
    assert answers["late"].status_code == 409, answers["late"].text
    assert answers["late"].json()["error"]["code"] == "CONFLICT"
    assert "Too late" in answers["late"].json()["error"]["message"]
    library = tmp_path / "library"
    (done,) = (d for d in rows if d["state"] == "done")
    assert sorted(str(p.relative_to(library)) for p in library.rglob("*.cbz")) == [done["path"]]
    assert "Ch.3" in done["path"]
    # A cancel of a chapter kept is too late as well.
    again = await host.client.post(f"/_/downloads/{done['id']}", json={"action": "cancel"})
    assert again.status_code == 409


async def test_a_reader_removed_leaves_no_pause_to_the_next_of_that_name(host: ServedHost) -> None:
    await add_reader(host, "ren", "hunter22")
    paused = await host.client.put("/_/downloads/queue", json={"paused": True}, auth=basic("ren"))
    assert paused.json()["paused"] == "reader"
    assert await asyncio.to_thread(host.core.readers.readers.remove, "ren")
    await add_reader(host, "ren", "hunter22")
    assert (await queue(host, "ren"))["own"]["paused"] is None
