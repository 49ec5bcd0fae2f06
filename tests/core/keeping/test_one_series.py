"""A kept series and its upstream original are one series to follow: following either is
following the original, once, and stays so when the upstream takes the series down; a new
chapter found by a check, kept and read in the kept file, is read in the reader's updates."""

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest

from tests.cluster.upstream import served
from tests.core.follows.receiver import Receiver
from tests.core.keeping.kept import pirates, settled, until
from tests.faces.kosync.koreader import KOReader, book_digest
from tests.sources.mangadex.fake import Chapter, FakeMangaDex
from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio


async def followed(host: ServedHost) -> list[tuple[str, str]]:
    listed = (await host.client.get("/_/follows")).json()["follows"]
    return [(f["source"], f["manga"]) for f in listed]


async def test_a_kept_series_and_its_original_are_followed_once(
    host: ServedHost, fake: FakeMangaDex, library: Path
) -> None:
    manga_id, chapter_ids = pirates(fake)
    tie = await settled(host, await host.core.keeper.keep("mangadex", manga_id, chapter_ids[0]))
    copy = f"/_/follows/series/local/{tie.local_manga}"
    original = f"/_/follows/series/mangadex/{manga_id}"

    # Following the kept series in the library follows its original.
    made = await host.client.put(copy)
    assert made.status_code == 201
    assert (made.json()["source"], made.json()["manga"], made.json()["title"]) == (
        "mangadex",
        manga_id,
        "Pirate Voyage",
    )
    # Following the original then is following it already: one follow, not two.
    assert (await host.client.put(original)).status_code == 200
    assert await followed(host) == [("mangadex", manga_id)]
    for path in (copy, original):
        answer = await host.client.get(path)
        assert answer.status_code == 200 and answer.json()["manga"] == manga_id
    # Unfollowing either unfollows the one series.
    assert (await host.client.delete(copy)).status_code == 204
    assert await followed(host) == []
    assert (await host.client.get(original)).status_code == 404

    # MangaDex takes the series down: the kept series is still followed as its original.
    for chapter in chapter_ids:
        del fake.chapters[chapter]
    del fake.manga[manga_id]
    host.core.cache.invalidate("mangadex")
    assert (await host.client.put(original)).status_code == 404
    made = await host.client.put(copy)
    assert made.status_code == 201 and made.json()["manga"] == manga_id
    assert (await host.client.put(copy)).status_code == 200
    assert await followed(host) == [("mangadex", manga_id)]


async def test_a_new_chapter_kept_and_read_in_koreader_is_read_in_the_updates(
    host: ServedHost, fake: FakeMangaDex, library: Path
) -> None:
    manga_id, chapter_ids = pirates(fake)
    follow = f"/_/follows/series/mangadex/{manga_id}"
    assert (await host.client.put(follow)).status_code == 201

    async def first_checked() -> str | None:
        return (await host.client.get(follow)).json()["lastCheck"]

    # The follow's own first check (on the job engine) finds what exists, which is not new;
    # a chapter published before it ran would not be new either.
    await until(first_checked)
    # MangaDex publishes chapter 4; a check finds it, unread.
    new = publish_chapter_4(host, fake, manga_id, chapter_ids)
    await host.core.follows.check_here(("mangadex", manga_id))
    updates = (await host.client.get("/_/follows/updates")).json()["updates"]
    assert [(u["chapter"], u["unread"]) for u in updates] == [(new.id, True)]

    # Kept, then read to its last page in KOReader: the update is read, the follow has none.
    tie = await settled(host, await host.core.keeper.keep("mangadex", manga_id, new.id))
    assert tie.path.endswith("Pirate Voyage Vol.1 Ch.4 - Chapter 4 [Straw Hat Scans].cbz")
    device = KOReader(host.client, "anyone", "whatever")
    assert (await device.update_progress(book_digest(library / tie.path), 3, 3)).status_code == 200
    assert (await host.client.get("/_/follows/updates?unread=1")).json()["updates"] == []
    follow = (await host.client.get(f"/_/follows/series/local/{tie.local_manga}")).json()
    assert (follow["manga"], follow["unread"]) == (manga_id, 0)


def publish_chapter_4(
    host: ServedHost, fake: FakeMangaDex, manga_id: str, chapter_ids: list[str]
) -> Chapter:
    """MangaDex publishes chapter 4 of the series, an hour after its last, by the same group;
    the host's cached answers of MangaDex are forgotten, so that a check sees it."""
    before = fake.chapters[chapter_ids[-1]]
    new = fake.add_chapter(
        fake.manga[manga_id],
        "4",
        volume="1",
        title="Chapter 4",
        publish_at=before.publish_at + timedelta(hours=1),
        groups=before.groups,
    )
    host.core.cache.invalidate("mangadex")
    return new


async def kept_before_its_tie(
    host: ServedHost, fake: FakeMangaDex, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, list[str], str]:
    """A MangaDex series' first chapter kept and indexed by the library, its tie left unresolved
    (the library's changes are not reported to the keeper; the tie waits for ``settle()``):
    the series' id, its chapters' ids and the library's slug of the copy."""
    keeper = host.core.keeper
    monkeypatch.setattr(keeper, "_settle_soon", lambda: None)
    manga_id, chapter_ids = pirates(fake)
    kept = await keeper.keep("mangadex", manga_id, chapter_ids[0])
    assert keeper.library is not None
    source = keeper.library.source

    async def indexed() -> str | None:
        found = await source.chapter_of_file(kept.tie.document)
        return None if found is None else found.manga_slug

    return manga_id, chapter_ids, await until(indexed)


async def test_a_copy_followed_before_its_tie_is_known_is_followed_once_after(
    host: ServedHost, fake: FakeMangaDex, library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader follows the kept series the library serves before the keeper learned which of
    its series the file is (the tie unresolved), and its original too: once the tie is known,
    the reader follows the one series, once, and unfollowing it leaves nothing behind."""
    keeper = host.core.keeper
    manga_id, _, local_manga = await kept_before_its_tie(host, fake, monkeypatch)
    copy = f"/_/follows/series/local/{local_manga}"
    original = f"/_/follows/series/mangadex/{manga_id}"
    assert (await host.client.put(copy)).status_code == 201
    assert (await host.client.put(original)).status_code == 201
    assert sorted(await followed(host)) == sorted([("local", local_manga), ("mangadex", manga_id)])

    assert await keeper.settle() == 1
    assert await followed(host) == [("mangadex", manga_id)]
    for path in (copy, original):
        answer = await host.client.get(path)
        assert answer.status_code == 200 and answer.json()["manga"] == manga_id
    assert (await host.client.delete(copy)).status_code == 204
    assert await followed(host) == []
    assert await asyncio.to_thread(host.core.follows.store.series, "local", local_manga) is None


async def test_news_of_a_copy_followed_before_its_tie_is_known_come_from_its_original_once(
    host: ServedHost, fake: FakeMangaDex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader follows the kept series the library serves before its tie is known, and asks
    to hear of it alone on their phone (a target limited to the library's series), and of it
    and its original on a webhook: once the follows merge into the original, both targets are
    limited to the original, and a chapter MangaDex publishes then is told once to each."""
    keeper = host.core.keeper
    manga_id, chapter_ids, local_manga = await kept_before_its_tie(host, fake, monkeypatch)
    copy, original = f"local/{local_manga}", f"mangadex/{manga_id}"
    receiver = Receiver()
    with served(receiver.app()) as service:
        port = service.rsplit(":", 1)[1]
        assert (await host.client.put(f"/_/follows/series/{copy}")).status_code == 201
        for hook, series in (("phone", [copy]), ("webhook", [copy, original])):
            made = await host.client.post(
                "/_/follows/targets",
                json={"url": f"json://127.0.0.1:{port}/{hook}", "series": series},
            )
            assert made.status_code == 201 and sorted(made.json()["series"]) == sorted(series)

        assert await keeper.settle() == 1
        assert await followed(host) == [("mangadex", manga_id)]
        targets = (await host.client.get("/_/follows/targets")).json()["targets"]
        assert [t["series"] for t in targets] == [[original], [original]]
        # A target set now, naming the library's series, names its original too.
        later = await host.client.post(
            "/_/follows/targets",
            json={"url": f"json://127.0.0.1:{port}/later", "series": [copy]},
        )
        assert later.json()["series"] == [original]

        await host.core.follows.check_here(("mangadex", manga_id))  # what exists, not news
        new = publish_chapter_4(host, fake, manga_id, chapter_ids)
        _, outcomes = await host.core.follows.check_here(("mangadex", manga_id))
        assert [(o.new, [c.slug for c in o.chapters]) for o in outcomes] == [(1, [new.id])]
    told = sorted(m.path for m in receiver.messages)
    assert told == ["/later", "/phone", "/webhook"]
    assert all("Chapter 4" in m.body["message"] for m in receiver.messages)
