"""Search: every sort in both directions, every filter, pagination and declared tags."""

import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.local_sources import SourceFactory
from toshokan.models import FilterKey, SearchRequest
from toshokan.sdk import RequestContext
from toshokan.sources.local import LocalLibrary
from toshokan.sources.local.index import Index
from toshokan.sources.local.index import search as searching
from toshokan.sources.local.scanner import Scanner

from .helpers import cbz, comicinfo

pytestmark = pytest.mark.anyio
CTX = RequestContext(base_url="http://testserver")


def _at(year: int, month: int = 1) -> float:
    return datetime(year, month, 1, tzinfo=UTC).timestamp()


def _chapter(path: Path, mtime: float, **info: str) -> None:
    cbz(path, pages=1, info=comicinfo(**info) if info else None)
    os.utime(path, (mtime, mtime))


@pytest.fixture
def search_root(tmp_path: Path) -> Path:
    root = tmp_path / "lib"
    alpha = {
        "Genre": "Action",
        "Tags": "Space",
        "Writer": "Ann Author",
        "Penciller": "Art Person",
        "Publisher": "Pub One",
        "AgeRating": "Everyone",
        "LanguageISO": "en",
    }
    for n, month in ((1, 1), (2, 2), (3, 3)):
        _chapter(
            root / "Alpha" / f"Ch.{n}.cbz",
            _at(2018, month),
            Number=str(n),
            Year="2021",
            Month=str(month),
            **alpha,
        )
    # Year is set on one chapter only so the series year is the earliest given.
    _chapter(root / "Alpha" / "Ch.1.cbz", _at(2018, 1), Number="1", Year="2001", Month="1", **alpha)
    beta = {
        "Genre": "Drama",
        "Tags": "Robots",
        "Writer": "Bob",
        "Publisher": "Pub Two",
        "AgeRating": "Adults Only 18+",
    }
    _chapter(
        root / "Beta" / "Ch.1 [JP].cbz",
        _at(2019, 1),
        Number="1",
        LanguageISO="ja",
        Year="1999",
        **beta,
    )
    _chapter(root / "Beta" / "Ch.1 [ES].cbz", _at(2019, 2), Number="1", LanguageISO="es", **beta)
    _chapter(
        root / "Beta" / "Ch.2 [JP].cbz",
        _at(2019, 3),
        Number="2",
        LanguageISO="ja",
        Year="2022",
        Month="1",
        **beta,
    )
    gamma = {"Genre": "Action, Drama", "Tags": "Space, Robots", "Writer": "Ann Author"}
    for n in range(1, 6):
        _chapter(
            root / "Gamma" / f"Ch.{n}.cbz",
            _at(2017, n) if n < 5 else _at(2024, 1),
            Number=str(n),
            **gamma,
        )
    (root / "Gamma" / "series.json").write_text('{"metadata": {"status": "Ended"}}')
    for n in (1, 2, 3):
        path = root / "Gamma" / f"Ch.{n}.cbz"
        cbz(path, pages=1, info=comicinfo(Number=str(n), Year="2020", Month="6", **gamma))
        os.utime(path, (_at(2017, n), _at(2017, n)))
    _chapter(root / "Delta" / "Ch.1.cbz", _at(2023, 1))
    return root


@pytest.fixture
async def library(make_source: SourceFactory, search_root: Path) -> LocalLibrary:
    return await make_source(search_root)


async def slugs_for(source: LocalLibrary, **request: Any) -> list[str]:
    request.setdefault("page", 1)
    request.setdefault("sort", "title")
    response = await source.search(SearchRequest.model_validate(request), CTX)
    return [entry.slug for entry in response.results]


@pytest.mark.parametrize(
    ("sort", "descending"),
    [
        ("title", ["gamma", "delta", "beta", "alpha"]),
        ("chapters", ["gamma", "alpha", "beta", "delta"]),
        ("latest", ["gamma", "delta", "beta", "alpha"]),
    ],
)
async def test_sorts_both_directions(
    library: LocalLibrary, sort: str, descending: list[str]
) -> None:
    assert await slugs_for(library, sort=sort, direction="desc") == descending
    assert await slugs_for(library, sort=sort, direction="asc") == list(reversed(descending))


async def test_created_and_updated_follow_the_library_not_file_times(
    tmp_path: Path, make_source: SourceFactory
) -> None:
    root = tmp_path / "lib"
    # File times say Old is newer; the library saw Old first.
    _chapter(root / "Old" / "Ch.1.cbz", _at(2030))
    source = await make_source(root)
    _chapter(root / "New" / "Ch.1.cbz", _at(2001))
    await source.rescan()
    assert await slugs_for(source, sort="createdAt", direction="desc") == ["new", "old"]
    assert await slugs_for(source, sort="updatedAt", direction="desc") == ["new", "old"]
    _chapter(root / "Old" / "Ch.2.cbz", _at(2001))
    await source.rescan()
    assert await slugs_for(source, sort="createdAt", direction="desc") == ["new", "old"]
    assert await slugs_for(source, sort="updatedAt", direction="desc") == ["old", "new"]


async def test_year_sort_puts_unknown_years_last(library: LocalLibrary) -> None:
    assert await slugs_for(library, sort="year", direction="desc") == [
        "gamma",
        "alpha",
        "beta",
        "delta",
    ]
    assert await slugs_for(library, sort="year", direction="asc") == [
        "beta",
        "alpha",
        "gamma",
        "delta",
    ]


async def test_relevance(library: LocalLibrary) -> None:
    assert set(await slugs_for(library, sort="relevance", query="ann")) == {"alpha", "gamma"}
    assert await slugs_for(library, sort="relevance", query="alph") == ["alpha"]
    assert await slugs_for(library, sort="relevance", query="nothing-like-this") == []
    everything = await slugs_for(library, sort="relevance")
    assert sorted(everything) == ["alpha", "beta", "delta", "gamma"]
    assert await slugs_for(library, sort="relevance", direction="asc") == list(reversed(everything))
    # Quotes and FTS syntax in the query are only words.
    assert await slugs_for(library, sort="relevance", query='"al*pha OR ) (') == []


async def test_title_query_outranks_people(tmp_path: Path, make_source: SourceFactory) -> None:
    root = tmp_path / "lib"
    cbz(root / "Nobody" / "c1.cbz", info=comicinfo(Writer="Mori Kenji"))
    cbz(root / "Mori" / "c1.cbz")
    source = await make_source(root)
    assert await slugs_for(source, sort="relevance", query="mori") == ["mori", "nobody"]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"genre": ["action"]}, ["alpha", "gamma"]),
        ({"genre": ["drama", "action"]}, ["alpha", "beta", "gamma"]),
        ({"includeTag": ["space", "robots"]}, ["gamma"]),
        ({"includeTag": ["action"]}, ["alpha", "gamma"]),
        ({"excludeTag": ["robots"]}, ["alpha", "delta"]),
        ({"status": ["Completed"]}, ["gamma"]),
        ({"status": ["Unknown", "Ongoing"]}, ["alpha", "beta", "delta"]),
        ({"contentRating": ["Explicit"]}, ["beta"]),
        ({"contentRating": ["Safe"]}, ["alpha"]),
        ({"year": 1999}, ["beta"]),
        ({"author": "ann"}, ["alpha", "gamma"]),
        ({"author": "100%"}, []),
        ({"artist": "art person"}, ["alpha"]),
        ({"publisher": "pub two"}, ["beta"]),
        ({"minChapters": 3}, ["alpha", "gamma"]),
        ({"originalLanguage": ["ja"]}, ["beta"]),
        ({"translatedLanguage": ["es"]}, ["beta"]),
        ({"translatedLanguage": ["en"]}, ["alpha", "delta", "gamma"]),
        ({"genre": ["action"], "minChapters": 4}, ["gamma"]),
    ],
)
async def test_filters(library: LocalLibrary, filters: dict[str, Any], expected: list[str]) -> None:
    assert await slugs_for(library, sort="title", direction="asc", filters=filters) == expected


async def test_query_and_filter_together(library: LocalLibrary) -> None:
    assert await slugs_for(
        library, sort="relevance", query="ann", filters={"genre": ["drama"]}
    ) == ["gamma"]


async def test_pagination_and_more(library: LocalLibrary) -> None:
    seen = []
    for page in range(1, 5):
        response = await library.search(
            SearchRequest(page=page, limit=1, sort="title", direction="asc"), CTX
        )
        assert response.page == page
        assert response.more is (page < 4)
        seen += [entry.slug for entry in response.results]
    assert seen == ["alpha", "beta", "delta", "gamma"]
    past = await library.search(SearchRequest(page=9, limit=2, sort="title"), CTX)
    assert past.page == 9 and past.results == [] and past.more is False
    exact = await library.search(SearchRequest(page=2, limit=2, sort="title"), CTX)
    assert exact.more is False and len(exact.results) == 2


async def test_entries_carry_thumbnails(library: LocalLibrary) -> None:
    response = await library.search(SearchRequest(page=1, sort="title"), CTX)
    for entry in response.results:
        assert entry.cover and entry.cover.startswith(
            f"http://testserver/_/local/thumbnails/{entry.slug}"
        )


async def test_configuration_declares_library_tags(library: LocalLibrary) -> None:
    config = library.configuration()
    assert [tag.slug for tag in config.search.tags] == ["action", "drama", "robots", "space"]
    assert FilterKey.INCLUDE_TAG in config.search.filters
    assert set(config.languages) == {"en", "es", "ja"}
    assert config.updatedAt is not None
    assert [p.name for p in config.presets] == ["Recently updated", "Recently added", "A to Z"]
    for preset in config.presets:
        assert (await library.search(preset.request, CTX)).results


async def test_no_tags_means_no_tag_filters(tmp_path: Path, make_source: SourceFactory) -> None:
    root = tmp_path / "lib"
    cbz(root / "Plain" / "c1.cbz")
    source = await make_source(root, name="Plain Shelf", nsfw=True)
    config = source.configuration()
    assert config.search.tags == []
    assert FilterKey.INCLUDE_TAG not in config.search.filters
    assert config.languages == ["en"] and config.nsfw and config.name == "Plain Shelf"
    assert config.icon.startswith("http") and config.url.startswith("http")


@pytest.mark.parametrize("first", ["acme", "ACME"])
async def test_filter_values_differing_in_case_keep_one_order(
    tmp_path: Path, make_source: SourceFactory, first: str
) -> None:
    # Whichever spelling the scan meets first, the list is the same.
    root = tmp_path / "lib"
    second = first.swapcase()
    cbz(root / "A" / "c1.cbz", info=comicinfo(Publisher=first, Writer=first))
    cbz(root / "B" / "c1.cbz", info=comicinfo(Publisher=second, Writer=second))
    source = await make_source(root)
    assert await source.filter_values(FilterKey.PUBLISHER) == ["ACME", "acme"]
    assert await source.filter_values(FilterKey.AUTHOR) == ["ACME", "acme"]


async def test_an_index_from_before_prefix_indexes_is_brought_up_to_date(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    for name in ("Tabibito", "Tabby Cat", "Other"):
        cbz(root / name / "c1.cbz", info=comicinfo(Writer="Tanaka Mori"))
    path = tmp_path / "index.sqlite3"
    index = Index(path)
    Scanner(root, index, workers=1).scan()
    requests = [SearchRequest(query=q, page=1, sort="relevance") for q in ("ta", "tab", "mori")]
    before = [searching.run(index.reader(), request) for request in requests]
    index.close()
    # The full-text table as version 8 made it, without prefix indexes.
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE VIRTUAL TABLE old USING fts5(title, alt_titles, people, "
            "tokenize = 'unicode61 remove_diacritics 2')"
        )
        db.execute(
            "INSERT INTO old(rowid, title, alt_titles, people) "
            "SELECT rowid, title, alt_titles, people FROM series_fts"
        )
        db.execute("DROP TABLE series_fts")
        db.execute("ALTER TABLE old RENAME TO series_fts")
        db.execute("UPDATE meta SET value = '8' WHERE key = 'schema'")
        slugs = db.execute("SELECT relpath, slug, created_at FROM series ORDER BY 1").fetchall()
    index = Index(path)
    with sqlite3.connect(path) as db:
        (table,) = db.execute("SELECT sql FROM sqlite_master WHERE name = 'series_fts'").fetchone()
        assert (
            db.execute("SELECT relpath, slug, created_at FROM series ORDER BY 1").fetchall()
            == slugs
        )
    assert "prefix = '2 3'" in table
    assert [searching.run(index.reader(), request) for request in requests] == before
    assert before[0][0]  # the upgraded index still finds them
    assert Scanner(root, index, workers=1).scan().changed is False
