"""Keeping every series a reader follows from a source, on both engines: the series followed
before and after are kept with the source's filters, a series kept on its own keeps its own,
the operator's limits hold, and turning it off queues nothing more."""

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest

from tests.core.downloads.queue import (
    ANYONE,
    cbz_files,
    downloads,
    keeping_host,
    pirates,
    settled,
    until,
)
from tests.sources.mangadex.fake import T0, FakeMangaDex
from tests.sources.mangadex.image_servers import ImageServers
from tests.sources.mangadex.sample import two_series
from toshokan.errors import HostError
from toshokan.testing import ServedHost

pytestmark = pytest.mark.anyio


@pytest.fixture
def fake() -> FakeMangaDex:
    fake = two_series()
    group = next(iter(fake.groups))
    fake.add_many_chapters(fake.manga[sky(fake)], 2, fake.groups[group])
    return fake


@pytest.fixture
def library(tmp_path: Path) -> Path:
    folder = tmp_path / "library"
    folder.mkdir()
    return folder


def sky(fake: FakeMangaDex) -> str:
    return next(m.id for m in fake.manga.values() if m.title["en"] == "Sky Garden")


def publish(fake: FakeMangaDex, manga: str, number: str, language: str = "en") -> str:
    group = next(iter(fake.groups))
    chapter = fake.add_chapter(
        fake.manga[manga],
        number,
        title=f"Chapter {number}",
        publish_at=T0 + timedelta(days=30 + float(number)),
        groups=[group],
        language=language,
    )
    return chapter.id


async def follow(host: ServedHost, manga: str) -> None:
    """Follow the series; return once its first check recorded what exists."""
    core = host.core
    await core.follows.follow(ANYONE, "mangadex", manga)

    async def checked() -> bool:
        series = await asyncio.to_thread(core.follows.store.series, "mangadex", manga)
        return series is not None and series.state == "ok"

    await until(checked)


async def check_all(host: ServedHost) -> None:
    await asyncio.sleep(1.1)  # a reader's "check now" checks once a round at most
    await host.core.follows.check_now(ANYONE, None)


async def test_every_series_followed_from_a_source_is_kept_unless_kept_on_its_own(
    fake: FakeMangaDex, library: Path, tmp_path: Path, database_url: str | None
) -> None:
    pirate, garden = pirates(fake), sky(fake)
    async with keeping_host(ImageServers(fake), library, tmp_path / "data", database_url) as host:
        kept = host.core.downloads
        await follow(host, pirate)
        await follow(host, garden)
        # Sky Garden is kept on its own, in Spanish only; every other series in English.
        await kept.keep(ANYONE, "mangadex", garden, languages=["es"])
        rule = await kept.keep_every(ANYONE, "mangadex", languages=["en"])
        assert (rule.languages, rule.backfill) == (("en",), 0)
        assert await downloads(host) == []  # what existed before is not backfilled
        new_pirate = publish(fake, pirate, "4")
        publish(fake, garden, "3")  # English: not what Sky Garden's own keep asks for
        new_garden = publish(fake, garden, "4", language="es")
        await check_all(host)
        rows = await settled(host, 2)
        assert {(d.manga, d.chapter) for d in rows} == {(pirate, new_pirate), (garden, new_garden)}
        assert len(cbz_files(library)) == 2
        # The reader sees them as theirs (the downloads of the series they keep).
        mine = await kept.listing(ANYONE, everyone=False)
        assert {d.chapter for d in mine.downloads} == {new_pirate, new_garden}

        # A series followed after the rule is kept by it too.
        harbour = fake.add_manga("harbour", "Moon Harbour").id
        publish(fake, harbour, "1")
        await follow(host, harbour)
        new_harbour = publish(fake, harbour, "2")
        await check_all(host)
        rows = await settled(host, 3)
        assert new_harbour in {d.chapter for d in rows if d.state == "done"}

        # Off: nothing more is queued for the series kept only by it; what was kept stays,
        # and the series kept on its own goes on.
        assert await kept.unkeep_every(ANYONE, "mangadex")
        assert await kept.every_of(ANYONE, "mangadex") is None
        publish(fake, pirate, "5")
        later_garden = publish(fake, garden, "5", language="es")
        await check_all(host)
        rows = await settled(host, 4)
        await asyncio.sleep(1.5)
        rows = await downloads(host)
        assert {d.chapter for d in rows} == {new_pirate, new_garden, new_harbour, later_garden}
        assert len(cbz_files(library)) == 4
        assert not await kept.unkeep_every(ANYONE, "mangadex")
        # Its own keep stopped, a series is kept as the source's keep says again.
        await kept.keep_every(ANYONE, "mangadex", languages=["en"])
        assert await kept.unkeep(ANYONE, "mangadex", garden)
        (again,) = await asyncio.to_thread(kept.store.keeps, "mangadex", garden)
        assert (again.reader, again.manga, again.languages) == (ANYONE, garden, ("en",))


async def test_a_source_not_kept_by_the_operator_or_unknown_is_refused_and_nothing_stored(
    fake: FakeMangaDex, library: Path, tmp_path: Path, database_url: str | None
) -> None:
    async with keeping_host(
        ImageServers(fake), library, tmp_path / "data", database_url, sources=["other"]
    ) as host:
        kept = host.core.downloads
        await follow(host, pirates(fake))
        with pytest.raises(HostError, match=r"\[keep\] sources"):
            await kept.keep_every(ANYONE, "mangadex")
        with pytest.raises(HostError) as unknown:
            await kept.keep_every(ANYONE, "nowhere")
        assert unknown.value.status == 404
        with pytest.raises(HostError, match="library kept copies go to"):
            await kept.keep_every(ANYONE, "local")
        assert await kept.every_of(ANYONE, "mangadex") is None
        assert await asyncio.to_thread(kept.store.keeps) == []
