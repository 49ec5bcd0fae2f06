"""``toshokan mangadex refresh-tags`` against the fake's ``GET /manga/tag``."""

import json
from pathlib import Path

import respx
from click.testing import CliRunner

from toshokan import __version__
from toshokan.cli import main
from toshokan.sources.mangadex.tags import catalogue_from_json, shipped_catalogue

from .fake import API, FakeMangaDex, new_id


def run_refresh(fake: FakeMangaDex, output: Path) -> str:
    with respx.mock(assert_all_called=False) as router:
        router.route(host=API.removeprefix("https://")).mock(
            side_effect=respx.ASGIHandler(fake.app)
        )
        result = CliRunner().invoke(
            main,
            ["mangadex", "refresh-tags", "--api-url", API, "--output", str(output)],
            env={"TOSHOKAN_HOST__DATA_DIR": str(output.parent)},
        )
    assert result.exit_code == 0, result.output
    return result.output


def test_refresh_reproduces_the_shipped_list(fake: FakeMangaDex, tmp_path: Path) -> None:
    output = tmp_path / "tags.json"
    run_refresh(fake, output)
    fresh = catalogue_from_json(json.loads(output.read_text()))
    shipped = shipped_catalogue()
    assert fresh.tags == shipped.tags
    assert [r.path for r in fake.requests] == ["/manga/tag"]
    # The host's own User-Agent, as `toshokan serve` sends it.
    assert {r.user_agent for r in fake.requests} == {
        f"toshokan/{__version__} (+https://github.com/toshokan-host/toshokan)"
    }


def test_refresh_keeps_slugs_by_id(fake: FakeMangaDex, tmp_path: Path) -> None:
    output = tmp_path / "tags.json"
    output.write_text(json.dumps(shipped_catalogue().to_json()))
    renamed = next(t for t in fake.tags if t["attributes"]["name"]["en"] == "Self-Published")
    renamed["attributes"]["name"]["en"] = "Independent Release"
    gone = next(t for t in fake.tags if t["attributes"]["name"]["en"] == "Mahjong")
    fake.tags.remove(gone)
    fake.tags.append(
        {
            "id": new_id("tag:new"),
            "type": "tag",
            "attributes": {
                "name": {"en": "Sci-Fi"},
                "description": {},
                "group": "content",
                "version": 1,
            },
            "relationships": [],
        }
    )
    printed = run_refresh(fake, output)
    fresh = catalogue_from_json(json.loads(output.read_text()))
    by_id = {t.id: t for t in fresh.tags}
    assert by_id[renamed["id"]].slug == "self-published"  # renamed upstream, same slug here
    assert by_id[renamed["id"]].name == "Independent Release"
    assert gone["id"] not in by_id
    newcomer = by_id[new_id("tag:new")]
    assert newcomer.slug == "sci-fi-2" and newcomer.nsfw  # its name's slug was taken; content group
    assert "+ sci-fi-2" in printed and "- mahjong" in printed and "~ self-published" in printed
