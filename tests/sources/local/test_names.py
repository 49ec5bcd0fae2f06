"""File and folder name parsing: the fallback when archives carry no metadata."""

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toshokan.sdk.archives import Member
from toshokan.sdk.names import (
    natural_key,
    parse_chapter_name,
    parse_series_name,
)
from toshokan.sources.local.comicinfo import ComicInfo
from toshokan.sources.local.discovery import FoundChapter
from toshokan.sources.local.reading import chapter_record
from toshokan.sources.local.slugs import (
    assign,
    candidates,
    chapter_base_slug,
    is_slug,
    series_base_slug,
)


@pytest.mark.parametrize(
    ("name", "number", "volume", "title", "group"),
    [
        ("Vol.02 Ch.011.5 - Title [Group].cbz", 11.5, 2, "Title", "Group"),
        ("One Piece Ch.1045 [TCB].cbz", 1045, None, "", "TCB"),
        ("Chapter 12.cbz", 12, None, "", ""),
        ("c001.cbz", 1, None, "", ""),
        ("Berserk v01 c003.cbr", 3, 1, "", ""),
        ("Series 012.cbz", 12, None, "", ""),
        ("Series - 012.cbz", 12, None, "", ""),
        ("Vol.03.cb7", None, 3, "", ""),
        ("Episode 7 - The Storm.zip", 7, None, "The Storm", ""),
        ("Ch.5,5.cbz", 5.5, None, "", ""),
        ("Ch.1.5", 1.5, None, "", ""),
        ("20th Century Boys 012 [Scans].cbz", 12, None, "", "Scans"),
    ],
)
def test_chapter_names(
    name: str, number: float | None, volume: float | None, title: str, group: str
) -> None:
    info = parse_chapter_name(name)
    assert info.number == number
    assert info.volume == volume
    assert info.title == title
    assert info.group == group


def _real_world_names() -> list[tuple[str, ...]]:
    table = Path(__file__).parent / "data" / "chapter_names.tsv"
    rows = [
        tuple(line.split("\t"))
        for line in table.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    assert len(rows) >= 150 and all(len(row) in (6, 7) for row in rows)
    return [row if len(row) == 7 else (*row, "") for row in rows]


@pytest.mark.parametrize(
    ("name", "number", "volume", "title", "group", "language", "series"), _real_world_names()
)
def test_real_world_names(
    name: str, number: str, volume: str, title: str, group: str, language: str, series: str
) -> None:
    want = (
        float(number) if number else None,
        float(volume) if volume else None,
        title,
        group,
        language,
    )
    if "/" in name:  # read as the library reads a chapter in folders
        record = chapter_record(
            FoundChapter(name, "zip", "1:1", 0.0),
            [Member("1.jpg", 1)],
            ComicInfo(),
            default_language="",
        )
        got = (
            record["number"],
            record["volume"],
            record["title"],
            record["scanlator"],
            record["language"],
        )
        assert got == want
        return
    info = parse_chapter_name(name)
    got = (info.reading_number, info.volume, info.title, info.group, info.language)
    assert got == want
    if series:
        assert info.series == series


def test_oneshot_is_zero() -> None:
    info = parse_chapter_name("The Quiet Lantern - Oneshot [Lantern Works].cbz")
    assert info.oneshot and info.number == 0
    assert info.group == "Lantern Works"
    assert info.series == "The Quiet Lantern"


def test_no_number_at_all() -> None:
    info = parse_chapter_name("Extras.cbz")
    assert info.number is None and info.volume is None


def test_series_folder_name() -> None:
    parsed = parse_series_name("One Piece (1997) [Digital]")
    assert parsed.title == "One Piece" and parsed.year == 1997
    assert parse_series_name("Plain").title == "Plain"


def test_natural_order() -> None:
    names = ["10.jpg", "2.jpg", "1.jpg", "a10.png", "a2.png"]
    assert sorted(names, key=natural_key) == ["1.jpg", "2.jpg", "10.jpg", "a2.png", "a10.png"]


@given(st.text(max_size=80))
def test_parser_never_raises_and_numbers_are_valid(name: str) -> None:
    info = parse_chapter_name(name + ".cbz")
    for value in (info.number, info.volume):
        assert value is None or value >= 0


@given(st.floats(min_value=0, max_value=10_000, allow_nan=False).map(lambda f: round(f, 1)))
def test_number_roundtrip(number: float) -> None:
    text = f"{number:g}" if "e" not in f"{number:g}" else str(number)
    info = parse_chapter_name(f"Ch.{text} [G].cbz")
    assert info.number == pytest.approx(number)


@given(st.text(max_size=40), st.text(max_size=20), st.sampled_from(["en", "es", "pt-BR"]))
def test_chapter_slugs_are_slugs(stem: str, group: str, language: str) -> None:
    slug = chapter_base_slug(
        number=None,
        volume=None,
        oneshot=False,
        group=group,
        language=language,
        default_language="en",
        stem=stem,
    )
    assert is_slug(slug)
    assert slug not in {"search", "health", "ping", "authenticate"}


def test_readable_chapter_slugs() -> None:
    common: dict[str, Any] = {
        "volume": None,
        "oneshot": False,
        "language": "en",
        "default_language": "en",
        "stem": "x",
    }
    assert chapter_base_slug(number=1045, group="Group", **common) == "ch-1045-group"
    assert chapter_base_slug(number=11.5, group="", **common) == "ch-11-5"
    assert (
        chapter_base_slug(
            number=1,
            group="Jardin",
            volume=None,
            oneshot=False,
            language="es",
            default_language="en",
            stem="x",
        )
        == "ch-1-jardin-es"
    )
    assert (
        chapter_base_slug(
            number=0,
            group="",
            volume=None,
            oneshot=True,
            language="en",
            default_language="en",
            stem="x",
        )
        == "oneshot"
    )


def test_collisions_get_a_disambiguator_from_their_own_path() -> None:
    items = [("b/x.cbz", "ch-1"), ("a/x.cbz", "ch-1"), ("c/x.cbz", "ch-2"), ("d", "ch-1")]
    first = assign(items, {})
    assert first["a/x.cbz"] == "ch-1"
    assert first["c/x.cbz"] == "ch-2"
    assert first["b/x.cbz"] == next(c for c in candidates("ch-1", "b/x.cbz") if c != "ch-1")
    assert first["d"].startswith("ch-1-") and len(first["d"]) == len("ch-1-") + 6
    assert len(set(first.values())) == 4
    # Order of input does not matter.
    assert assign(list(reversed(items)), {}) == first


def test_claimed_slugs_never_move() -> None:
    claims = {"re-zero": "Re Zero"}
    # The holder left; the others keep their own slugs and never take its.
    later = assign([("Re-Zero", "re-zero"), ("Re\uff1aZero", "re-zero")], claims)
    assert "re-zero" not in later.values()
    assert later == assign([("Re-Zero", "re-zero"), ("Re\uff1aZero", "re-zero")], claims)
    # A newcomer that sorts first does not displace the holder.
    claims = {"re-zero": "Re-Zero"}
    assert (
        assign([("A Re Zero", "re-zero"), ("Re-Zero", "re-zero")], claims)["Re-Zero"] == "re-zero"
    )
    # The holder coming back gets its slug back.
    assert assign([("Re Zero", "re-zero")], {"re-zero": "Re Zero"}) == {"Re Zero": "re-zero"}


@pytest.mark.parametrize(
    ("title", "slug"),
    [
        ("進撃の巨人", "jin-ji-no-ju-ren"),
        ("Ωmega Rising", "omega-rising"),
        ("Дорога", "doroga"),
        ("Pokémon Adventures", "pokemon-adventures"),
        ("나 혼자만 레벨업", "na-hon-ja-man-le-bel-eob"),
        ("???", "series"),
    ],
)
def test_series_slugs_are_readable_in_any_script(title: str, slug: str) -> None:
    assert series_base_slug(title) == slug
