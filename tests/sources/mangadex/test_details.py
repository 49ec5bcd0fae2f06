"""Details: titles by language preference, people, every cover, tags as slugs, enums."""

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from toshokan.errors import MangaNotFound
from toshokan.models import Classification, Publication
from toshokan.sdk import RequestContext
from toshokan.sources.mangadex import MangaDex

from .fake import UPLOADS, Cover, FakeMangaDex, new_id, tag_id

pytestmark = pytest.mark.anyio
CTX = RequestContext()


@pytest.mark.parametrize(
    ("language", "tags", "direction"),
    [
        ("ja", ["action"], "rtl"),
        ("ja-ro", [], "rtl"),
        ("ko", ["long-strip"], "vertical"),
        ("ja", ["long-strip", "action"], "vertical"),
        ("ko", ["action"], None),
        ("en", ["action"], None),
    ],
)
async def test_how_a_series_reads(
    fake: FakeMangaDex, source: MangaDex, language: str, tags: list[str], direction: str | None
) -> None:
    """A Long Strip reads down; a Japanese original right to left (MangaDex has no field of
    its own for it); nothing is said of any other."""
    manga = fake.add_manga(
        "read", "Read", original_language=language, tags=[tag_id(t) for t in tags]
    )
    assert (await source.manga(manga.id, CTX)).readingDirection == direction


async def test_details(fake: FakeMangaDex, source: MangaDex) -> None:
    author = fake.add_person("Isayama Hajime")
    artist = fake.add_person("Someone Else")
    covers = [Cover(new_id(f"c{n}"), f"file{n}.png", str(n)) for n in (1, 2, 3)]
    manga = fake.add_manga(
        "aot",
        {"ja-ro": "Shingeki no Kyojin"},
        alt_titles=[
            {"ja": "進撃の巨人"},
            {"en": "Attack on Titan"},
            {"fr": "L'Attaque des Titans"},
        ],
        description={"en": "Humanity behind walls.", "fr": "L'humanité derrière des murs."},
        status="completed",
        content_rating="suggestive",
        authors=[author.id],
        artists=[author.id, artist.id],
        covers=covers,
        tags=[tag_id("action"), tag_id("boys-love"), tag_id("sci-fi")],
        created_at=datetime(2018, 1, 2, 3, 4, 5, tzinfo=UTC),
        updated_at=datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC),
    )
    details = await source.manga(manga.id, CTX)
    assert details.slug == manga.id
    assert details.url == f"https://mangadex.org/title/{manga.id}"
    assert details.title == "Attack on Titan"
    assert details.alternativeTitles == ["Shingeki no Kyojin", "進撃の巨人", "L'Attaque des Titans"]
    assert details.synopsis == "Humanity behind walls."
    assert details.authors == ["Isayama Hajime", "Someone Else"]
    main = f"{UPLOADS}/covers/{manga.id}/file3.png.512.jpg"
    assert details.covers == [main] + [
        f"{UPLOADS}/covers/{manga.id}/file{n}.png.512.jpg" for n in (1, 2)
    ]
    assert details.tags == ["action", "boys-love", "sci-fi"]
    assert details.classification is Classification.SUGGESTIVE
    assert details.publication is Publication.COMPLETED
    assert details.createdAt == datetime(2018, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert details.updatedAt == datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
    # One request for the title with its people and cover, one for every cover.
    (one,) = fake.calls(r"^/manga/[^/]+$")
    assert sorted(one.values("includes[]")) == ["artist", "author", "cover_art"]
    (cover_call,) = fake.calls(r"^/cover$")
    assert cover_call.values("manga[]") == [manga.id] and cover_call.value("limit") == "100"


async def test_title_language_preference_is_configurable(
    fake: FakeMangaDex, make_source: Callable[..., MangaDex]
) -> None:
    manga = fake.add_manga(
        "x",
        {"ja-ro": "Romaji"},
        alt_titles=[{"en": "English"}, {"ja": "日本語"}],
        description={"ja": "説明"},
    )
    details = await make_source(title_languages=["ja", "en"]).manga(manga.id, CTX)
    assert details.title == "日本語"
    assert details.alternativeTitles == ["Romaji", "English"]
    assert details.synopsis == "説明"
    fallback = await make_source(title_languages=["de"]).manga(manga.id, CTX)
    assert fallback.title == "Romaji"  # the main title when no preferred language has one


@pytest.mark.parametrize(
    ("rating", "classification"),
    [
        ("safe", Classification.SAFE),
        ("suggestive", Classification.SUGGESTIVE),
        ("erotica", Classification.EXPLICIT),
        ("pornographic", Classification.PORNOGRAPHIC),
    ],
)
async def test_content_ratings(
    fake: FakeMangaDex, source: MangaDex, rating: str, classification: str
) -> None:
    manga = fake.add_manga("r", "R", content_rating=rating)
    assert (await source.manga(manga.id, CTX)).classification == classification


@pytest.mark.parametrize(
    ("status", "publication"),
    [
        ("ongoing", Publication.ONGOING),
        ("completed", Publication.COMPLETED),
        ("hiatus", Publication.HIATUS),
        ("cancelled", Publication.CANCELLED),
    ],
)
async def test_statuses(
    fake: FakeMangaDex, source: MangaDex, status: str, publication: str
) -> None:
    manga = fake.add_manga("s", "S", status=status)
    assert (await source.manga(manga.id, CTX)).publication == publication


async def test_defaults_when_empty(fake: FakeMangaDex, source: MangaDex) -> None:
    manga = fake.add_manga("e", {}, covers=[], description={})
    details = await source.manga(manga.id, CTX)
    assert details.title == "Unknown Title"
    assert details.synopsis == "No Description."
    assert details.covers == [] and details.authors == [] and details.tags == []


async def test_unknown_manga_is_not_found(fake: FakeMangaDex, source: MangaDex) -> None:
    with pytest.raises(MangaNotFound) as raised:
        await source.manga(new_id("missing"), CTX)
    assert "could not be found" in raised.value.message  # MangaDex's own words


@pytest.mark.parametrize("slug", ["one-piece", "12345", "search", "a" * 36])
async def test_slugs_that_are_not_mangadex_ids_never_reach_it(
    fake: FakeMangaDex, source: MangaDex, slug: str
) -> None:
    with pytest.raises(MangaNotFound):
        await source.manga(slug, CTX)
    with pytest.raises(MangaNotFound):
        await source.chapters(slug, CTX)
    assert fake.requests == []


@pytest.mark.parametrize(
    ("language", "tags", "direction"),
    [
        ("ja", [], "rtl"),  # manga: read right to left
        ("ko", ["long-strip"], "vertical"),  # a webtoon: down one long strip
        ("ja", ["long-strip"], "vertical"),
        ("en", [], None),  # nothing said
        ("ko", [], None),
    ],
)
async def test_reading_direction_from_original_language_and_format(
    fake: FakeMangaDex, source: MangaDex, language: str, tags: list[str], direction: str | None
) -> None:
    manga = fake.add_manga(
        "work", {"en": "A Work"}, original_language=language, tags=[tag_id(t) for t in tags]
    )
    assert (await source.manga(manga.id, CTX)).readingDirection == direction
