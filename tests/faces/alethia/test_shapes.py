"""The dialect's translations on their own: dates, URLs, presets."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.faces.alethia import app_decoder as decode
from toshokan.faces.alethia.shapes import absolute_url, app_date, app_source
from toshokan.models import (
    FilterKey,
    Preset,
    SearchConfig,
    SearchRequest,
    SortOption,
    SourceConfiguration,
)
from toshokan.models.search import Filters


def test_dates_drop_fractions_and_become_utc() -> None:
    moment = datetime(2024, 5, 1, 14, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert app_date(moment) == "2024-05-01T12:00:00Z"
    assert app_date(datetime(1970, 1, 1, tzinfo=UTC)) == "1970-01-01T00:00:00Z"
    assert decode.date(app_date(moment)).tzinfo is not None
    with pytest.raises(decode.Undecodable):
        decode.date("2024-05-01T12:00:00.123456Z")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.org/a/b?c=1", "https://example.org/a/b?c=1"),
        ("https://example.org/a b", "https://example.org/a%20b"),
        ("https://example.org/ünï", "https://example.org/%C3%BCn%C3%AF"),
        ("/relative/path", None),
        ("example.org/x", None),
        ("ftp://example.org/x", None),
        ("", None),
    ],
)
def test_chapter_urls_are_absolute_or_replaced(url: str, expected: str | None) -> None:
    assert absolute_url(url) == expected
    if expected:
        decode.absolute_url(expected)


def config(sorts: list[SortOption], presets: list[Preset]) -> SourceConfiguration:
    return SourceConfiguration(
        name="Shelf",
        slug="shelf",
        icon="https://shelf.example/icon.png",
        url="https://shelf.example",
        languages=["en"],
        search=SearchConfig(sort=sorts, filters=[FilterKey.GENRE, FilterKey.YEAR]),
        presets=presets,
    )


def preset(name: str, sort: SortOption, **filters: object) -> Preset:
    request = SearchRequest(page=1, sort=sort, filters=Filters.model_validate(filters))
    return Preset(name=name, request=request)


def test_presets_are_translated_or_left_out() -> None:
    presets = [
        preset("latest", SortOption.LATEST),
        preset("views", SortOption.VIEWS),
        preset("genre", SortOption.TITLE, genre=["action"]),
        preset("year", SortOption.TITLE, year=2020),
    ]
    with_updated = app_source(
        config(
            [SortOption.LATEST, SortOption.UPDATED_AT, SortOption.VIEWS, SortOption.TITLE], presets
        )
    )
    decode.source(with_updated.model_dump(mode="json"))
    kept = {p.name: p.request for p in with_updated.presets}
    assert set(kept) == {"latest", "year"}
    assert kept["latest"].sort == "updatedAt"
    assert kept["year"].filters == {"year": 2020}
    assert with_updated.search.sort == ["updatedAt", "title"]
    assert with_updated.search.filters == ["year"]

    # Without updatedAt the source cannot run a latest preset the app can express.
    without = app_source(config([SortOption.LATEST, SortOption.TITLE], presets[:1]))
    assert without.presets == [] and without.search.sort == ["title"]


@given(
    st.text(max_size=60)
    | st.from_regex(r"https?://[a-z]{1,10}\.[a-z]{2,3}/.{0,20}", fullmatch=True)
)
def test_every_url_handed_out_is_one_the_app_parses(url: str) -> None:
    repaired = absolute_url(url)
    if repaired is not None:
        decode.absolute_url(repaired)
