"""Pages: at-home URLs in both qualities, and only for a chapter of the manga asked about."""

from collections.abc import Callable

import pytest

from toshokan.errors import ChapterNotFound, MangaNotFound
from toshokan.sdk import RequestContext
from toshokan.sources.mangadex import MangaDex

from .fake import AT_HOME, FakeMangaDex, new_id

pytestmark = pytest.mark.anyio
CTX = RequestContext()


async def test_full_quality_by_default(fake: FakeMangaDex, source: MangaDex) -> None:
    manga = fake.add_manga("m", "M")
    chapter = fake.add_chapter(manga, "1", pages=3)
    pages = await source.pages(manga.id, chapter.id, CTX)
    digest = f"hash{chapter.id[:8]}"
    assert pages == [f"{AT_HOME}/data/{digest}/{n}-full{n:03d}.png" for n in (1, 2, 3)]
    assert len(fake.calls("^/at-home/server/")) == 1


async def test_data_saver_when_configured(
    fake: FakeMangaDex, make_source: Callable[..., MangaDex]
) -> None:
    manga = fake.add_manga("m", "M")
    chapter = fake.add_chapter(manga, "1", pages=2)
    pages = await make_source(data_saver=True).pages(manga.id, chapter.id, CTX)
    digest = f"hash{chapter.id[:8]}"
    assert pages == [f"{AT_HOME}/data-saver/{digest}/{n}-saver{n:03d}.jpg" for n in (1, 2)]


async def test_chapter_of_another_manga_is_not_found(fake: FakeMangaDex, source: MangaDex) -> None:
    mine, other = fake.add_manga("a", "A"), fake.add_manga("b", "B")
    chapter = fake.add_chapter(other, "1")
    with pytest.raises(ChapterNotFound):
        await source.pages(mine.id, chapter.id, CTX)
    assert fake.calls("^/at-home/") == []  # the at-home budget is not spent on it


async def test_unknown_chapter_is_not_found(fake: FakeMangaDex, source: MangaDex) -> None:
    manga = fake.add_manga("a", "A")
    with pytest.raises(ChapterNotFound) as raised:
        await source.pages(manga.id, new_id("nope"), CTX)
    assert "could not be found" in raised.value.message


async def test_bad_slugs_never_reach_mangadex(fake: FakeMangaDex, source: MangaDex) -> None:
    manga = fake.add_manga("a", "A")
    with pytest.raises(ChapterNotFound):
        await source.pages(manga.id, "chapter-1", CTX)
    with pytest.raises(MangaNotFound):
        await source.pages("my-manga", new_id("x"), CTX)
    assert fake.requests == []


async def test_external_chapter_has_no_pages(fake: FakeMangaDex, source: MangaDex) -> None:
    manga = fake.add_manga("a", "A")
    chapter = fake.add_chapter(manga, "1", external_url="https://example.com/read/1")
    with pytest.raises(ChapterNotFound) as raised:
        await source.pages(manga.id, chapter.id, CTX)
    assert "https://example.com/read/1" in raised.value.message
    assert fake.calls("^/at-home/") == []
