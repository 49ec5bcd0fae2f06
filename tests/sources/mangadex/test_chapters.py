"""Chapters: newest first, groups as scanlators, versions told apart, off-site chapters, the feed."""

from collections.abc import Callable
from datetime import timedelta

import pytest

from toshokan.errors import MangaNotFound
from toshokan.sdk import RequestContext
from toshokan.sources.mangadex import MangaDex

from .fake import T0, FakeMangaDex, new_id

pytestmark = pytest.mark.anyio
CTX = RequestContext()


async def test_newest_first_with_several_groups(fake: FakeMangaDex, source: MangaDex) -> None:
    manga = fake.add_manga("m", "M")
    alpha, beta = fake.add_group("Alpha Scans"), fake.add_group("Beta Team")
    day = timedelta(days=1)
    c1 = fake.add_chapter(manga, "1", volume="1", title="Start", publish_at=T0, groups=[alpha.id])
    c2a = fake.add_chapter(manga, "2", volume="1", publish_at=T0 + day, groups=[alpha.id])
    c2b = fake.add_chapter(manga, "2", volume="1", publish_at=T0 + 2 * day, groups=[beta.id])
    joint = fake.add_chapter(manga, "2.5", publish_at=T0 + 2 * day, groups=[alpha.id, beta.id])
    none = fake.add_chapter(manga, "3", title="Solo", publish_at=T0 + 3 * day)

    chapters = await source.chapters(manga.id, CTX)
    assert [c.slug for c in chapters] == [
        none.id,
        joint.id,
        c2b.id,
        c2a.id,
        c1.id,
    ]  # date desc, then number
    by_slug = {c.slug: c for c in chapters}
    assert by_slug[joint.id].scanlator == "Alpha Scans, Beta Team"
    assert by_slug[joint.id].number == 2.5
    assert by_slug[none.id].scanlator == "Unknown Scanlator"
    assert by_slug[c1.id].title == "Vol. 1 Ch. 1 - Start"
    assert by_slug[c2a.id].title == "Vol. 1 Ch. 2 (Alpha Scans)"
    assert by_slug[c2b.id].title == "Vol. 1 Ch. 2 (Beta Team)"
    assert by_slug[c1.id].url == f"https://mangadex.org/chapter/{c1.id}"
    assert by_slug[c1.id].date == T0
    assert by_slug[c1.id].language == "en"


async def test_languages_and_version_titles(
    fake: FakeMangaDex, make_source: Callable[..., MangaDex]
) -> None:
    manga = fake.add_manga("m", "M")
    group = fake.add_group("G")
    en = fake.add_chapter(manga, "1", language="en", groups=[group.id])
    fr = fake.add_chapter(manga, "1", language="fr", groups=[group.id])
    fake.add_chapter(manga, "1", language="de", groups=[group.id])
    same_a = fake.add_chapter(manga, "2", language="en", groups=[group.id])
    same_b = fake.add_chapter(manga, "2", language="en", groups=[group.id])
    source = make_source(languages=["en", "fr"])
    chapters = {c.slug: c for c in await source.chapters(manga.id, CTX)}
    assert set(chapters) == {en.id, fr.id, same_a.id, same_b.id}
    assert fake.calls("/feed$")[-1].values("translatedLanguage[]") == ["en", "fr"]
    assert chapters[en.id].title == "Ch. 1 (en)" and chapters[fr.id].title == "Ch. 1 (fr)"
    assert chapters[fr.id].language == "fr"
    assert chapters[same_a.id].title != chapters[same_b.id].title


async def test_oneshots_and_odd_numbers(fake: FakeMangaDex, source: MangaDex) -> None:
    manga = fake.add_manga("m", "M")
    oneshot = fake.add_chapter(manga, None, title="The Oneshot")
    half = fake.add_chapter(manga, "10.5")
    chapters = {c.slug: c for c in await source.chapters(manga.id, CTX)}
    assert chapters[oneshot.id].number == 0
    assert chapters[oneshot.id].title == "Oneshot - The Oneshot"
    assert chapters[half.id].number == 10.5


async def test_external_chapters_excluded_by_default(fake: FakeMangaDex, source: MangaDex) -> None:
    manga = fake.add_manga("m", "M")
    hosted = fake.add_chapter(manga, "1")
    fake.add_chapter(manga, "2", external_url="https://mangaplus.shueisha.co.jp/viewer/1")
    fake.add_chapter(manga, "3", pages=0)  # no pages is off-site too
    chapters = await source.chapters(manga.id, CTX)
    assert [c.slug for c in chapters] == [hosted.id]
    assert fake.calls("/feed$")[-1].value("includeExternalUrl") == "0"


async def test_external_chapters_marked_when_configured(
    fake: FakeMangaDex, make_source: Callable[..., MangaDex]
) -> None:
    manga = fake.add_manga("m", "M")
    fake.add_chapter(manga, "1")
    link = "https://mangaplus.shueisha.co.jp/viewer/1"
    external = fake.add_chapter(manga, "2", title="Away", external_url=link)
    chapters = {
        c.slug: c for c in await make_source(external_chapters="mark").chapters(manga.id, CTX)
    }
    assert chapters[external.id].title == "[External] Ch. 2 - Away"
    assert chapters[external.id].url == link
    assert fake.calls("/feed$")[-1].value("includeExternalUrl") == "1"


async def test_unavailable_and_future_chapters_are_left_out(
    fake: FakeMangaDex, source: MangaDex
) -> None:
    manga = fake.add_manga("m", "M")
    ok = fake.add_chapter(manga, "1")
    fake.add_chapter(manga, "2", unavailable=True)
    fake.add_chapter(manga, "3", publish_at=fake.now + timedelta(days=3))
    assert [c.slug for c in await source.chapters(manga.id, CTX)] == [ok.id]


async def test_pornographic_titles_still_list_chapters(
    fake: FakeMangaDex, source: MangaDex
) -> None:
    manga = fake.add_manga("m", "M", content_rating="pornographic")
    fake.add_chapter(manga, "1")
    assert len(await source.chapters(manga.id, CTX)) == 1


async def test_unknown_manga_is_not_found(fake: FakeMangaDex, source: MangaDex) -> None:
    with pytest.raises(MangaNotFound):
        await source.chapters(new_id("nothing"), CTX)


async def test_known_manga_without_chapters_is_empty(fake: FakeMangaDex, source: MangaDex) -> None:
    manga = fake.add_manga("m", "M")
    assert await source.chapters(manga.id, CTX) == []


async def test_large_feed_is_fetched_concurrently_once_per_page(
    fake: FakeMangaDex, source: MangaDex
) -> None:
    manga = fake.add_manga("big", "Big")
    made = fake.add_many_chapters(manga, 2_000, fake.add_group("G"))
    fake.latency = 0.05
    chapters = await source.chapters(manga.id, CTX)
    assert len(chapters) == 2_000 and {c.slug for c in chapters} == {c.id for c in made}
    assert [c.number for c in chapters[:3]] == [2000, 1999, 1998]
    feed = fake.calls("/feed$")
    assert len(feed) == 4
    pages = [(call.value("offset"), call.value("limit")) for call in feed]
    assert pages[0] == ("0", "500")
    assert sorted(pages) == [("0", "500"), ("1000", "500"), ("1500", "500"), ("500", "500")]
    # The three later pages left together, right after the first answered.
    starts = sorted(call.at for call in feed[1:])
    assert starts[-1] - starts[0] < fake.latency


async def test_feed_respects_the_offset_cap(fake: FakeMangaDex, source: MangaDex) -> None:
    manga = fake.add_manga("huge", "Huge")
    fake.validate = False  # 10,250 chapters: skip re-validating the fake's own pages
    fake.add_many_chapters(manga, 10_250)
    chapters = await source.chapters(manga.id, CTX)
    assert len(chapters) == 10_000
    pages = sorted(int(c.value("offset") or 0) for c in fake.calls("/feed$"))
    assert pages == list(range(0, 10_000, 500))
    assert all(
        int(c.value("offset") or 0) + int(c.value("limit") or 0) <= 10_000
        for c in fake.calls("/feed$")
    )
