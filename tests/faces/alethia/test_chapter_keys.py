"""Chapter keys: one slug naming a chapter within its source, decoded back exactly."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toshokan.errors import ChapterNotFound
from toshokan.faces.alethia.keys import chapter_key, chapter_of
from toshokan.models.base import SLUG_PATTERN

slugs = st.from_regex(r"[a-z0-9_-]{1,80}", fullmatch=True)


@given(slugs, slugs)
def test_chapter_keys_round_trip_inside_the_slug_alphabet(manga: str, chapter: str) -> None:
    key = chapter_key(manga, chapter)
    assert chapter_of(key) == (manga, chapter)
    assert re.fullmatch(SLUG_PATTERN, key)


@given(st.text(max_size=40) | st.from_regex(r"[0-9]{1,2}_[a-z0-9_-]{0,30}", fullmatch=True))
def test_anything_else_is_not_a_chapter(text: str) -> None:
    try:
        manga, chapter = chapter_of(text)
    except ChapterNotFound:
        return
    assert chapter_key(manga, chapter) == text  # only canonical keys decode


@pytest.mark.parametrize(
    "key", ["", "_a_b", "0_a", "01_a_b", "3_abc", "3_abcxd", "2_a!_b", "99999_a"]
)
def test_malformed_keys(key: str) -> None:
    with pytest.raises(ChapterNotFound):
        chapter_of(key)
