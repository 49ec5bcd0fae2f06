"""Search: every sort and filter reaches MangaDex as the parameter it documents."""

from collections.abc import Callable
from typing import Any

import pytest

from toshokan.errors import InvalidRequest
from toshokan.models import SearchRequest
from toshokan.sdk import RequestContext
from toshokan.sources.mangadex import MangaDex

from .fake import UPLOADS, FakeMangaDex, tag_id

pytestmark = pytest.mark.anyio
CTX = RequestContext()


def req(**fields: Any) -> SearchRequest:
    fields.setdefault("page", 1)
    fields.setdefault("sort", "latest")
    return SearchRequest.model_validate(fields)


async def last_manga_query(fake: FakeMangaDex, source: MangaDex, request: SearchRequest) -> Any:
    await source.search(request, CTX)
    return fake.calls(r"^/manga$")[-1]


@pytest.mark.parametrize(
    ("sort", "field"),
    [
        ("relevance", "relevance"),
        ("latest", "latestUploadedChapter"),
        ("title", "title"),
        ("year", "year"),
        ("createdAt", "createdAt"),
        ("updatedAt", "updatedAt"),
        ("popularity", "followedCount"),
        ("follows", "followedCount"),
        ("rating", "rating"),
    ],
)
@pytest.mark.parametrize("direction", ["asc", "desc"])
async def test_every_sort_in_both_directions(
    fake: FakeMangaDex, source: MangaDex, sort: str, field: str, direction: str
) -> None:
    call = await last_manga_query(fake, source, req(query="x", sort=sort, direction=direction))
    orders = [(k, v) for k, v in call.query if k.startswith("order[")]
    assert orders == [(f"order[{field}]", direction)]
    assert call.value("title") == "x"


async def test_relevance_without_a_query_browses_by_popularity(
    fake: FakeMangaDex, source: MangaDex
) -> None:
    call = await last_manga_query(fake, source, req(sort="relevance"))
    assert call.value("order[followedCount]") == "desc"
    assert call.value("title") is None


async def test_sorts_order_results(fake: FakeMangaDex, source: MangaDex) -> None:
    a = fake.add_manga("a", "Alpha", follows=5, rating=9.0, year=2001)
    b = fake.add_manga("b", "Beta", follows=50, rating=7.0, year=2010)
    for manga in (a, b):
        fake.add_chapter(manga, "1")
    by_follows = await source.search(req(sort="follows"), CTX)
    assert [e.slug for e in by_follows.results] == [b.id, a.id]
    by_title = await source.search(req(sort="title", direction="asc"), CTX)
    assert [e.title for e in by_title.results] == ["Alpha", "Beta"]
    by_rating = await source.search(req(sort="rating"), CTX)
    assert [e.slug for e in by_rating.results] == [a.id, b.id]


async def test_tags_become_mangadex_ids(fake: FakeMangaDex, source: MangaDex) -> None:
    request = req(filters={"includeTag": ["action", "sci-fi"], "excludeTag": ["boys-love", "gore"]})
    call = await last_manga_query(fake, source, request)
    assert call.values("includedTags[]") == [tag_id("action"), tag_id("sci-fi")]
    assert call.values("excludedTags[]") == [tag_id("boys-love"), tag_id("gore")]
    assert call.value("includedTagsMode") == "AND"
    assert call.value("excludedTagsMode") == "OR"


async def test_tag_filters_select_works(fake: FakeMangaDex, source: MangaDex) -> None:
    both = fake.add_manga("both", "Both", tags=[tag_id("action"), tag_id("comedy")])
    action = fake.add_manga("action", "Action only", tags=[tag_id("action")])
    for manga in (both, action):
        fake.add_chapter(manga, "1")
    found = await source.search(
        req(filters={"includeTag": ["action"], "excludeTag": ["comedy"]}), CTX
    )
    assert [e.slug for e in found.results] == [action.id]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (
            {"status": ["ongoing", "Completed"]},
            [("status[]", "ongoing"), ("status[]", "completed")],
        ),
        ({"status": ["hiatus", "cancelled"]}, [("status[]", "hiatus"), ("status[]", "cancelled")]),
        (
            {"contentRating": ["Safe", "Explicit", "Pornographic"]},
            [
                ("contentRating[]", "safe"),
                ("contentRating[]", "erotica"),
                ("contentRating[]", "pornographic"),
            ],
        ),
        ({"contentRating": ["suggestive"]}, [("contentRating[]", "suggestive")]),
        ({"year": 2019}, [("year", "2019")]),
        (
            {"originalLanguage": ["ja", "KO"]},
            [("originalLanguage[]", "ja"), ("originalLanguage[]", "ko")],
        ),
        (
            {"translatedLanguage": ["pt-br", "en"]},
            [("availableTranslatedLanguage[]", "pt-br"), ("availableTranslatedLanguage[]", "en")],
        ),
        (
            {"demographic": ["Shounen", "josei"]},
            [("publicationDemographic[]", "shounen"), ("publicationDemographic[]", "josei")],
        ),
    ],
)
async def test_filters_become_mangadex_parameters(
    fake: FakeMangaDex, source: MangaDex, filters: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    call = await last_manga_query(fake, source, req(filters=filters))
    names = {name for name, _ in expected}
    assert [(k, v) for k, v in call.query if k in names] == expected


async def test_defaults_without_filters(
    fake: FakeMangaDex, make_source: Callable[..., MangaDex]
) -> None:
    source = make_source(content_ratings=["safe", "erotica"], languages=["en", "fr"])
    call = await last_manga_query(fake, source, req())
    assert call.values("contentRating[]") == ["safe", "erotica"]
    assert call.values("availableTranslatedLanguage[]") == ["en", "fr"]
    assert call.values("includes[]") == ["author", "artist", "cover_art"]
    relaxed = make_source(search_available_languages_only=False)
    call = await last_manga_query(fake, relaxed, req())
    assert call.values("availableTranslatedLanguage[]") == []


async def test_content_rating_filter_overrides_the_default(
    fake: FakeMangaDex, source: MangaDex
) -> None:
    call = await last_manga_query(fake, source, req(filters={"contentRating": ["Pornographic"]}))
    assert call.values("contentRating[]") == ["pornographic"]


@pytest.mark.parametrize(
    "filters",
    [
        {"status": ["finished"]},
        {"contentRating": ["adult"]},
        {"demographic": ["kodomo"]},
        {"originalLanguage": ["japanese!"]},
    ],
)
async def test_values_mangadex_cannot_take_are_invalid(
    fake: FakeMangaDex, source: MangaDex, filters: dict[str, Any]
) -> None:
    with pytest.raises(InvalidRequest):
        await source.search(req(filters=filters), CTX)
    assert fake.requests == []


async def test_author_and_artist_names_resolve_to_ids(fake: FakeMangaDex, source: MangaDex) -> None:
    oda = fake.add_person("Oda Eiichirou")
    fake.add_person("Oda Nobunaga")
    inoue = fake.add_person("Inoue Takehiko")
    piece = fake.add_manga("op", "One Piece", authors=[oda.id], artists=[oda.id])
    vagabond = fake.add_manga("vb", "Vagabond", authors=[inoue.id], artists=[inoue.id])
    for manga in (piece, vagabond):
        fake.add_chapter(manga, "1")

    found = await source.search(req(filters={"author": "oda eiichirou"}), CTX)
    assert [e.slug for e in found.results] == [piece.id]
    call = fake.calls(r"^/manga$")[-1]
    assert call.values("authors[]") == [oda.id]
    assert fake.calls(r"^/author$")[-1].value("name") == "oda eiichirou"

    found = await source.search(
        req(filters={"artist": "Inoue"}), CTX
    )  # no exact match: the best one
    assert [e.slug for e in found.results] == [vagabond.id]
    assert fake.calls(r"^/manga$")[-1].values("artists[]") == [inoue.id]

    authors_before = len(fake.calls(r"^/author$"))
    await source.search(req(filters={"author": "Oda Eiichirou"}, page=2), CTX)
    assert len(fake.calls(r"^/author$")) == authors_before  # names are remembered


async def test_unknown_author_finds_nothing_without_searching(
    fake: FakeMangaDex, source: MangaDex
) -> None:
    fake.add_chapter(fake.add_manga("a", "A"), "1")
    found = await source.search(req(filters={"author": "Nobody At All"}), CTX)
    assert found.results == [] and found.more is False
    assert fake.calls(r"^/manga$") == []


async def test_entries_carry_cover_thumbnails(fake: FakeMangaDex, source: MangaDex) -> None:
    manga = fake.add_manga(
        "c", {"ja-ro": "Shingeki no Kyojin"}, alt_titles=[{"en": "Attack on Titan"}]
    )
    fake.add_chapter(manga, "1")
    found = await source.search(req(query="titan"), CTX)
    (entry,) = found.results
    assert entry.title == "Attack on Titan"
    assert entry.cover == f"{UPLOADS}/covers/{manga.id}/{manga.covers[-1].file_name}.256.jpg"


async def test_more_follows_total(fake: FakeMangaDex, source: MangaDex) -> None:
    for n in range(25):
        fake.add_chapter(fake.add_manga(f"m{n}", f"Manga {n}"), "1")
    first = await source.search(req(limit=10), CTX)
    assert len(first.results) == 10 and first.more is True
    third = await source.search(req(limit=10, page=3), CTX)
    assert len(third.results) == 5 and third.more is False and third.page == 3
    past = await source.search(req(limit=10, page=4), CTX)
    assert past.results == [] and past.more is False and past.page == 4


async def test_offset_cap_is_never_crossed(fake: FakeMangaDex, source: MangaDex) -> None:
    for n in range(3):
        fake.add_chapter(fake.add_manga(f"m{n}", f"Manga {n}"), "1")
    # Page 334 of 30 starts at 9990: only 10 results are reachable, so ask for 10 and say no more.
    await source.search(req(limit=30, page=334), CTX)
    call = fake.calls(r"^/manga$")[-1]
    assert (call.value("offset"), call.value("limit")) == ("9990", "10")
    # A page that starts at the cap is empty without asking MangaDex anything.
    count = len(fake.requests)
    beyond = await source.search(req(limit=100, page=101), CTX)
    assert beyond.results == [] and beyond.more is False and beyond.page == 101
    assert len(fake.requests) == count


async def test_last_reachable_page_says_no_more(fake: FakeMangaDex, source: MangaDex) -> None:
    fake.add_chapter(fake.add_manga("m", "M"), "1")
    fake.pretend_total = 50_000
    page = await source.search(req(limit=100, page=100), CTX)  # offset 9900, the last 100 reachable
    assert page.more is False
    call = fake.calls(r"^/manga$")[-1]
    assert (call.value("offset"), call.value("limit")) == ("9900", "100")
    earlier = await source.search(req(limit=100, page=99), CTX)
    assert earlier.more is True
