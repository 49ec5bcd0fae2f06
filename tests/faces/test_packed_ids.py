"""Packed ids: what the apps were handed keeps naming the same thing, and nothing else names
anything.

Mihon keeps Komga's series and book ids in its library, the Alethia app chapter keys in its
database: the forms below are the ones they were handed, spelled out here by their rule and
by example, so a change of the packing that would orphan a stored id fails."""

import base64
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toshokan.core.ids import CHAPTER, IN_SLUG, JOINED, MAX_ID, OPAQUE, Packing
from toshokan.core.progress import ChapterRef
from toshokan.errors import ChapterNotFound, NotFound
from toshokan.faces.alethia.keys import chapter_key, chapter_of
from toshokan.faces.komga.ids import (
    book_id,
    book_of,
    collection_id,
    collection_of,
    series_id,
    series_of,
)
from toshokan.models.base import SLUG, SLUG_PATTERN

sources = st.from_regex(r"[a-z]{1,12}", fullmatch=True)
slugs = st.from_regex(r"[a-z0-9_-]{1,80}", fullmatch=True)


def komga_form(*slugs: str) -> str:
    """Komga's ids as handed out: the slugs joined by ``/``, base64url without padding."""
    return base64.urlsafe_b64encode("/".join(slugs).encode()).decode().rstrip("=")


@given(sources, slugs, slugs)
def test_komga_ids_are_spelled_as_they_were_handed_out(
    source: str, manga: str, chapter: str
) -> None:
    ref = ChapterRef(source, manga, chapter)
    assert series_id(source, manga) == komga_form(source, manga)
    assert book_id(ref) == komga_form(source, manga, chapter)
    assert series_of(komga_form(source, manga)) == (source, manga)
    assert book_of(komga_form(source, manga, chapter)) == ref


@given(slugs, slugs)
def test_chapter_keys_are_spelled_as_they_were_handed_out(manga: str, chapter: str) -> None:
    assert chapter_key(manga, chapter) == f"{len(manga)}_{manga}_{chapter}"
    assert chapter_of(f"{len(manga)}_{manga}_{chapter}") == (manga, chapter)


def test_ids_stored_by_the_apps_still_name_their_things() -> None:
    assert series_of("bG9jYWwvc2VyaWVzLTAx") == ("local", "series-01")
    assert book_of("bG9jYWwvc2VyaWVzLTAxL2NoLTAwMQ") == ChapterRef("local", "series-01", "ch-001")
    assert collection_of("bWFuZ2FkZXgvMg") == ("mangadex", 2)
    assert collection_id("mangadex", 2) == "bWFuZ2FkZXgvMg"
    assert chapter_of("9_series-01_ch-001") == ("series-01", "ch-001")
    assert chapter_of("5_a_b_c_d_e") == ("a_b_c", "d_e")


@given(st.lists(slugs, min_size=1, max_size=4))
def test_any_number_of_slugs_round_trips_in_each_spelling(given_slugs: list[str]) -> None:
    packing = Packing(tuple(SLUG for _ in given_slugs))
    for spelling in (OPAQUE, IN_SLUG, JOINED):
        packed = packing.pack(spelling, *given_slugs)
        assert packing.unpack(spelling, packed) == tuple(given_slugs)
    assert re.fullmatch(SLUG_PATTERN, packing.pack(IN_SLUG, *given_slugs))


@pytest.mark.parametrize(
    "forged",
    [
        "",
        "A" * (MAX_ID + 1),
        "not base64!",
        "%00",
        komga_form("local"),
        komga_form("local", "a", "b", "c"),
        komga_form("Local", "a", "b"),
        komga_form("local", "UPPER", "b"),
        komga_form("local", "a/b", "c"),
        komga_form("local", "", "b"),
        komga_form("local", "a", "é"),
        base64.urlsafe_b64encode(b"\xff\xfe/a/b").decode(),
    ],
)
def test_forged_komga_ids_name_nothing(forged: str) -> None:
    assert CHAPTER.unpack(OPAQUE, forged) is None
    with pytest.raises(NotFound):
        book_of(forged)
    with pytest.raises(NotFound):
        series_of(forged)


@pytest.mark.parametrize(
    "forged", ["", "_a_b", "0_a", "01_a_b", "3_abc", "3_abcxd", "2_a!_b", "99999_a", "1_a_", "1_a"]
)
def test_forged_chapter_keys_name_nothing(forged: str) -> None:
    with pytest.raises(ChapterNotFound):
        chapter_of(forged)


def test_a_collection_is_a_source_and_a_place() -> None:
    for forged in (komga_form("mangadex", "12345"), komga_form("mangadex", "x"), komga_form("m")):
        with pytest.raises(NotFound):
            collection_of(forged)
