"""``toshokan follows add --keep`` and ``toshokan downloads``: keeping a series and steering the
queue from the command line, as an operator does, against a fake MangaDex on a loopback port."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.cluster.upstream import served
from tests.sources.mangadex.fake import FakeMangaDex
from tests.sources.mangadex.sample import two_series
from toshokan.cli import main


@pytest.fixture
def fake() -> FakeMangaDex:
    return two_series()


@pytest.fixture
def config(tmp_path: Path, fake: FakeMangaDex) -> Iterator[Path]:
    library = tmp_path / "library"
    library.mkdir()
    with served(fake.app) as upstream:
        path = tmp_path / "toshokan.toml"
        path.write_text(
            f"""
[host]
data_dir = "{tmp_path / "data"}"
secret = "a-secret-for-the-test"

[sources.local]
root = "{library}"
watch = false

[sources.mangadex]
api_url = "{upstream}"
uploads_url = "{upstream}/uploads"
""",
            encoding="utf-8",
        )
        yield path


def run(config: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--config", str(config), *args])
    return result.exit_code, result.output


def test_keep_a_series_and_steer_its_queue(config: Path, fake: FakeMangaDex) -> None:
    manga = next(m for m in fake.manga.values() if m.title["en"] == "Pirate Voyage").id
    code, said = run(config, "follows", "add", "mangadex", manga, "--keep", "--backfill", "2")
    assert code == 0, said
    assert "keeping its new chapters" in said
    assert run(config, "follows", "check")[0] == 0  # the first check records what exists
    # Asked again (the filters replace the earlier ones): the backfill is queued now.
    code, said = run(config, "follows", "add", "mangadex", manga, "--keep", "--backfill", "2")
    assert code == 0, said
    code, listed = run(config, "downloads", "list")
    assert code == 0, listed
    lines = listed.splitlines()
    assert lines[:2] == ["queue: running", "downloads: queued 2"]
    assert ["Pirate Voyage Ch.2" in lines[2], "Pirate Voyage Ch.3" in lines[3]] == [True, True]
    first, second = (line.split()[0] for line in lines[2:4])

    code, said = run(config, "downloads", "pause")
    assert (code, said) == (0, "queue paused (chapters being kept finish)\n")
    assert run(config, "downloads", "list")[1].startswith("queue: paused since ")
    assert "(operator): paused by the operator" in run(config, "downloads", "list")[1]
    code, said = run(config, "downloads", "pause", first)
    assert code == 0 and " held " in said
    code, said = run(config, "downloads", "cancel", second)
    assert code == 0 and " cancelled " in said
    code, said = run(config, "downloads", "retry", second)
    assert code == 0 and " queued " in said
    code, said = run(config, "downloads", "resume", first)
    assert code == 0 and " queued " in said
    assert run(config, "downloads", "resume") == (0, "queue resumed\n")
    assert run(config, "downloads", "list")[1].splitlines()[:2] == [
        "queue: running",
        "downloads: queued 2",
    ]


def test_bad_input_is_one_line_and_changes_nothing(config: Path, fake: FakeMangaDex) -> None:
    manga = next(m for m in fake.manga.values() if m.title["en"] == "Sky Garden").id
    code, said = run(config, "follows", "add", "mangadex", manga, "--backfill", "2")
    assert code == 2 and "go with --keep" in said
    code, said = run(config, "follows", "add", "local", "anything", "--keep")
    assert code == 1
    assert run(config, "downloads", "cancel", "f" * 32) == (1, "toshokan: No such download.\n")
    code, said = run(config, "downloads", "retry", "x" * 200)
    assert (code, said) == (1, "toshokan: No such download.\n")
    assert run(config, "follows", "list") == (0, "")


def test_keep_every_series_followed_from_a_source(config: Path, fake: FakeMangaDex) -> None:
    manga = next(m for m in fake.manga.values() if m.title["en"] == "Pirate Voyage").id
    assert run(config, "follows", "add", "mangadex", manga)[0] == 0
    code, said = run(config, "follows", "keep", "mangadex", "--language", "en", "--only-unread")
    assert (code, said) == (
        0,
        "keeping every series followed from mangadex in the local library "
        "(`toshokan downloads list`)\n",
    )
    # The keep is listed with the follows, with its filters.
    code, listed = run(config, "follows", "list")
    assert code == 0, listed
    assert listed.splitlines()[0] == (
        "mangadex/*  keeping every series followed  (languages en; any group; only unread)"
    )
    assert listed.splitlines()[1].startswith(f"mangadex/{manga}  Pirate Voyage  ")
    code, said = run(config, "follows", "keep", "mangadex", "--off")
    assert (code, said) == (
        0,
        "no longer keeping every series followed from mangadex (what was kept stays)\n",
    )
    assert "keeping every series" not in run(config, "follows", "list")[1]
    code, said = run(config, "follows", "keep", "mangadex", "--off")
    assert (code, said) == (1, "toshokan: every series followed from mangadex is not kept\n")


def test_keep_every_series_refuses_bad_input_in_one_line(config: Path) -> None:
    code, said = run(config, "follows", "keep", "nowhere")
    assert code == 1 and said.startswith("toshokan: ") and said.count("\n") == 1
    assert "nowhere" in said
    code, said = run(config, "follows", "keep", "local")
    assert (code, said) == (
        1,
        "toshokan: local is the library kept copies go to: nothing to keep.\n",
    )
    code, said = run(config, "follows", "keep", "mangadex", "--off", "--language", "en")
    assert code == 2 and "--off takes no" in said
    code, said = run(config, "follows", "keep", "mangadex", "--reader", "nobody")
    assert (code, said) == (1, "toshokan: no reader is named 'nobody'\n")
    with config.open("a", encoding="utf-8") as toml:
        toml.write('\n[keep]\nsources = ["local"]\n')
    code, said = run(config, "follows", "keep", "mangadex")
    assert (code, said) == (
        1,
        "toshokan: Series of mangadex are not kept on this host ([keep] sources).\n",
    )
    code, said = run(config, "follows", "keep", "mangadex", "--off")
    assert code == 1  # nothing was stored to turn off


def test_a_reader_s_own_downloads_are_paused_and_resumed(config: Path, fake: FakeMangaDex) -> None:
    manga = next(m for m in fake.manga.values() if m.title["en"] == "Pirate Voyage").id
    assert run(config, "readers", "add", "ren", "--password", "hunter22")[0] == 0
    code, said = run(config, "follows", "add", "mangadex", manga, "--keep", "--reader", "ren")
    assert code == 0, said
    code, said = run(config, "downloads", "pause", "--reader", "ren")
    assert (code, said) == (0, "downloads of ren paused (chapters being kept finish)\n")
    code, listed = run(config, "downloads", "list", "--reader", "ren")
    assert code == 0, listed
    assert listed.splitlines()[0] == "queue: running"  # the host's queue is not paused
    assert listed.splitlines()[1].startswith("downloads of ren: paused since ")
    code, said = run(config, "downloads", "resume", "--reader", "ren")
    assert (code, said) == (0, "downloads of ren resumed\n")
    assert "paused" not in run(config, "downloads", "list", "--reader", "ren")[1]
    assert run(config, "downloads", "pause", "--reader", "nobody") == (
        1,
        "toshokan: no reader is named 'nobody'\n",
    )
