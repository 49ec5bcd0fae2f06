"""``toshokan follows``: following, checking and announcing from the command line, against a
fake MangaDex and a fake notification service on loopback ports, as an operator runs it."""

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.cluster.upstream import served
from tests.core.follows.receiver import Receiver
from tests.sources.mangadex.fake import T0, FakeMangaDex
from tests.sources.mangadex.sample import two_series
from toshokan.cli import main


@pytest.fixture
def fake() -> FakeMangaDex:
    return two_series()


@pytest.fixture
def receiver() -> Receiver:
    return Receiver()


@pytest.fixture
def config(tmp_path: Path, fake: FakeMangaDex, receiver: Receiver) -> Iterator[Path]:
    with served(fake.app) as upstream:
        path = tmp_path / "toshokan.toml"
        path.write_text(
            f"""
[host]
data_dir = "{tmp_path / "data"}"
secret = "a-secret-for-the-test"

[sources.mangadex]
api_url = "{upstream}"
uploads_url = "{upstream}/uploads"
""",
            encoding="utf-8",
        )
        yield path


def follows(config: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--config", str(config), "follows", *args])
    return result.exit_code, result.output


def test_follow_check_and_hear_of_a_new_chapter(
    config: Path, fake: FakeMangaDex, receiver: Receiver
) -> None:
    manga = next(m for m in fake.manga.values() if m.title["en"] == "Pirate Voyage")
    with served(receiver.app()) as service:
        port = service.rsplit(":", 1)[1]
        hook = f"json://127.0.0.1:{port}/hooks/s3cr3t-token"
        code, said = follows(config, "notify", "add", hook)
        assert code == 0, said
        assert "s3cr3t-token" not in said  # shown back redacted, never whole
        assert follows(config, "notify", "add", f"ntfy://127.0.0.1:{port}/reading")[0] == 0
        code, listed = follows(config, "notify", "list")
        assert "s3cr3t-token" not in listed and len(listed.splitlines()) == 2

        assert follows(config, "add", "mangadex", manga.id)[0] == 0
        code, said = follows(config, "check")
        assert code == 0, said
        assert "0 new chapter(s)" in said  # the first check records what exists
        assert receiver.messages == []

        fake.add_chapter(manga, "4", title="Landfall", publish_at=T0 + timedelta(days=30))
        fake.add_chapter(manga, "5", title="Storm", publish_at=T0 + timedelta(days=31))
        code, said = follows(config, "check")
        assert code == 0, said
        assert "Ch. 4 - Landfall" in said and "Ch. 5 - Storm" in said
        assert "2 new chapter(s)" in said

    # One message per batch and target, not one per chapter.
    by_path = {m.path: m for m in receiver.messages}
    assert len(receiver.messages) == 2
    webhook = by_path["/hooks/s3cr3t-token"].body
    assert webhook["title"] == "2 new chapters of Pirate Voyage"
    assert "Landfall" in webhook["message"] and "Storm" in webhook["message"]
    ntfy = by_path["/"].body
    assert ntfy["topic"] == "reading" and "Storm" in ntfy["message"]

    code, listed = follows(config, "list")
    assert f"mangadex/{manga.id}  Pirate Voyage  [ok]  unread 2" in listed
    code, status = follows(config, "status")
    assert code == 0 and "follows: 1 of 1 series" in status


def test_bad_input_is_one_line_and_a_failure(config: Path, fake: FakeMangaDex) -> None:
    unknown = "00000000-0000-0000-0000-000000000000"
    for args in (
        ("add", "mangadex", unknown),
        ("add", "nowhere", unknown),
        ("notify", "add", "nonsense://nowhere"),
        ("remove", "mangadex", unknown),
        ("add", "mangadex", unknown, "--reader", "nobody"),
    ):
        code, said = follows(config, *args)
        assert code == 1, (args, said)
        assert len(said.strip().splitlines()) == 1 and said.startswith("toshokan: "), said
    code, listed = follows(config, "list")
    assert code == 0 and listed == ""


def test_a_failing_target_is_reported_without_its_secrets_and_retried_later(
    config: Path, fake: FakeMangaDex, receiver: Receiver
) -> None:
    manga = next(m for m in fake.manga.values() if m.title["en"] == "Sky Garden")
    receiver.failing = 1
    with served(receiver.app()) as service:
        port = service.rsplit(":", 1)[1]
        assert follows(config, "notify", "add", f"json://127.0.0.1:{port}/hooks/t0k3n-xyz")[0] == 0
        assert follows(config, "add", "mangadex", manga.id)[0] == 0
        assert follows(config, "check")[0] == 0
        fake.add_chapter(manga, "1", title="Seeds")
        code, said = follows(config, "check")
    assert code == 0 and "1 new chapter(s)" in said  # the checks went on regardless
    assert receiver.refused == 1 and receiver.messages == []
    code, status = follows(config, "status")
    assert "notification targets: 1, 1 failing" in status
    assert "follows.deliver 1" in status  # queued again, for the host's retries
    code, listed = follows(config, "notify", "list")
    assert "failing:" in listed
    assert "t0k3n-xyz" not in status + listed
