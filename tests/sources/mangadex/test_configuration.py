"""The declaration: configuration, settings, tag list, entry point and commands."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import ValidationError

from toshokan.models import SortOption
from toshokan.registry import adapter
from toshokan.sdk import Source
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.sources.mangadex.tags import shipped_catalogue, shipped_path

pytestmark = pytest.mark.anyio


async def test_configuration(make_source: Callable[..., MangaDex]) -> None:
    config = make_source(languages=["en", "pt-br"]).configuration()
    assert (config.name, config.slug) == ("MangaDex", "mangadex")
    assert config.url == "https://mangadex.org" and config.referer == "https://mangadex.org/"
    assert config.icon.startswith("https://mangadex.org/")
    assert config.languages == ["en", "pt-br"]
    assert config.auth.type == "none" and not config.auth.required
    assert config.nsfw is False
    assert set(config.search.sort) == set(SortOption) - {SortOption.CHAPTERS, SortOption.VIEWS}
    assert {"includeTag", "excludeTag", "author", "artist", "translatedLanguage"} <= set(
        config.search.filters
    )
    assert {p.name for p in config.presets} >= {"Latest updates", "Most followed", "Top rated"}
    assert config.updatedAt == shipped_catalogue().generated_at
    assert config.version == MangaDex.version
    # A second call is identical: the host hashes it.
    assert make_source(languages=["en", "pt-br"]).configuration() == config


async def test_nsfw_follows_default_content_ratings(make_source: Callable[..., MangaDex]) -> None:
    assert (
        make_source(content_ratings=["safe", "suggestive", "erotica"]).configuration().nsfw is True
    )
    assert make_source(content_ratings=["safe"]).configuration().nsfw is False


async def test_tags_are_readable_stable_slugs(make_source: Callable[..., MangaDex]) -> None:
    tags = {t.slug: t for t in make_source().configuration().search.tags}
    assert len(tags) >= 70
    assert {"action", "boys-love", "girls-love", "sci-fi", "slice-of-life", "4-koma"} <= set(tags)
    assert tags["boys-love"].name == "Boys' Love"
    assert {slug for slug, tag in tags.items() if tag.nsfw} == {
        "gore",
        "sexual-violence",
        "incest",
        "loli",
        "shota",
    }
    catalogue = shipped_catalogue()
    action = catalogue.by_slug("action")
    assert action is not None and action.id == "391b0423-d847-456f-aff0-8b0cfc03066b"
    assert len({t.id for t in catalogue.tags}) == len(catalogue.tags)


def test_settings_are_strict_and_described() -> None:
    with pytest.raises(ValidationError):
        Settings.model_validate({"unknown_key": 1})
    with pytest.raises(ValidationError):
        Settings.model_validate({"content_ratings": ["adult"]})
    with pytest.raises(ValidationError):
        Settings.model_validate({"external_chapters": "hide"})
    for name, info in Settings.model_fields.items():
        assert info.description, f"setting {name} has no description"
    assert Settings(api_url="http://localhost:8080/").api_url == "http://localhost:8080"


def test_entry_point_and_commands() -> None:
    cls = adapter("mangadex")
    assert cls is MangaDex and issubclass(cls, Source)
    (group,) = MangaDex.commands()
    assert group.name == "mangadex"
    assert "refresh-tags" in group.commands  # type: ignore[attr-defined]


def test_tag_list_ships_in_the_package() -> None:
    data = json.loads(Path(shipped_path()).read_text(encoding="utf-8"))
    assert data["tags"] and data["generatedAt"]
