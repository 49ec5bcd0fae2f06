"""Reader accounts from the command line, as the host that serves them sees them."""

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers.databases import open_for
from toshokan.cli import main
from toshokan.config import load_settings
from toshokan.core.access import AttemptGate
from toshokan.core.cache import ResultCache
from toshokan.core.database import Database, open_database
from toshokan.core.limits import MovingWindowLimit
from toshokan.core.progress import ChapterRef, DocumentPosition, Position, ProgressStore
from toshokan.core.readers import ReaderGate, Readers
from toshokan.errors import InvalidCredentials, RateLimited

pytestmark = pytest.mark.anyio


@pytest.fixture
def config(tmp_path: Path, database_url: str | None) -> Path:
    (tmp_path / "library").mkdir()
    path = tmp_path / "toshokan.toml"
    cluster = f'[cluster]\ndatabase = "{database_url}"\n' if database_url else ""
    path.write_text(
        f'[host]\ndata_dir = "{tmp_path / "data"}"\n{cluster}'
        f'[sources.local]\nroot = "{tmp_path / "library"}"\n'
    )
    return path


def toshokan(config: Path, *args: str, input: str | None = None) -> list[str]:
    result = CliRunner().invoke(main, ["--config", str(config), *args], input=input)
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


@pytest.fixture
def gate_for() -> Iterator[Callable[..., ReaderGate]]:
    """The gate ``serve`` would build for a configuration; its database closed after the test."""
    opened: list[Database] = []

    def gate(config: Path, attempts: int = 10) -> ReaderGate:
        opened.append(open_database(load_settings(config)))
        return ReaderGate(
            Readers(opened[-1]),
            AttemptGate(MovingWindowLimit(attempts, "test")),
            b"secret",
            ResultCache({}, 16),
        )

    yield gate
    for database in opened:
        database.close()


async def test_a_reader_added_signs_in_with_password_key_and_koreader_key(
    config: Path, gate_for: Callable[..., ReaderGate]
) -> None:
    key = toshokan(config, "readers", "add", "mika", "--password", "hunter22")[-1]
    gate = gate_for(config)
    assert await gate.basic("mika", "hunter22", "198.51.100.1") == "mika"
    assert await gate.basic("mika", key, "198.51.100.1") == "mika"
    md5 = hashlib.md5(b"hunter22").hexdigest()
    assert await gate.koreader("mika", md5, "198.51.100.1") == "mika"
    for wrong in ("hunter3", key[:-1] + "x", md5):
        with pytest.raises(InvalidCredentials):
            await gate.basic("mika", wrong, "198.51.100.1")
    with pytest.raises(InvalidCredentials):
        await gate.koreader("mika", "hunter22", "198.51.100.1")  # KOReader sends the MD5


async def test_keys_are_renewed_and_revoked(
    config: Path, gate_for: Callable[..., ReaderGate]
) -> None:
    first = toshokan(config, "readers", "add", "mika", "--password", "hunter22")[-1]
    second = toshokan(config, "readers", "key", "mika")[-1]
    gate = gate_for(config)
    assert await gate.basic("mika", first, "c") == await gate.basic("mika", second, "c") == "mika"
    third = toshokan(config, "readers", "key", "mika", "--revoke")[-1]
    assert await gate.basic("mika", third, "c") == "mika"
    for revoked in (first, second):
        with pytest.raises(InvalidCredentials):
            await gate.basic("mika", revoked, "c")


async def test_a_new_password_replaces_the_old_at_once(
    config: Path, gate_for: Callable[..., ReaderGate]
) -> None:
    toshokan(config, "readers", "add", "mika", "--password", "hunter22")
    gate = gate_for(config)
    assert await gate.basic("mika", "hunter22", "c") == "mika"  # now remembered
    toshokan(config, "readers", "password", "mika", input="swordfish\nswordfish\n")
    with pytest.raises(InvalidCredentials):
        await gate.basic("mika", "hunter22", "c")
    assert await gate.basic("mika", "swordfish", "c") == "mika"
    assert await gate.koreader("mika", hashlib.md5(b"swordfish").hexdigest(), "c") == "mika"


async def test_list_and_remove(config: Path) -> None:
    toshokan(config, "readers", "add", "mika", "--password", "hunter22")
    toshokan(config, "readers", "add", "ren", "--password", "swordfish")
    listed = toshokan(config, "readers", "list")
    assert [line.split()[0] for line in listed] == ["mika", "ren"]
    toshokan(config, "readers", "remove", "mika", "--yes")
    assert [line.split()[0] for line in toshokan(config, "readers", "list")] == ["ren"]
    failed = CliRunner().invoke(main, ["--config", str(config), "readers", "remove", "mika"])
    assert failed.exit_code == 1 and "no reader" in failed.output


@pytest.mark.parametrize(
    "password", ["", " ", "short", "1234567", "mika", "MIKA", "  mika  "], ids=repr
)
def test_a_password_too_short_or_the_readers_name_is_refused_saying_the_rule(
    config: Path, password: str
) -> None:
    """An empty password let ``curl -u 'mika:'`` open every face: no account gets one."""
    added = CliRunner().invoke(
        main, ["--config", str(config), "readers", "add", "mika", "--password", password]
    )
    assert added.exit_code == 1
    assert added.output == (
        "toshokan: password refused: a password is at least 8 characters long "
        "and not the reader's name\n"
    )
    assert toshokan(config, "readers", "list") == []

    toshokan(config, "readers", "add", "mika", "--password", "mika's own")  # 10 characters
    changed = CliRunner().invoke(
        main, ["--config", str(config), "readers", "password", "mika", "--password", password]
    )
    assert changed.exit_code == 1 and "at least 8 characters" in changed.output


async def test_remove_says_what_goes_with_the_reader_and_asks_unless_told_yes(
    config: Path, gate_for: Callable[..., ReaderGate]
) -> None:
    toshokan(config, "readers", "add", "mika", "--password", "hunter22")
    toshokan(config, "readers", "key", "mika")
    store = ProgressStore(gate_for(config).readers.database)
    for chapter in ("ch-1", "ch-2", "ch-3"):
        ref = ChapterRef("local", "paper-cranes", chapter)
        store.record("mika", ref, Position(1, 20, False, 1000.0, "k", "Kobo"))
    store.record_document("mika", "d41d8cd98f", DocumentPosition("3", 0.1, 1000.0, "k", "Kobo"))
    remove = ["--config", str(config), "readers", "remove", "mika"]
    said = "reader mika with 2 API keys, 3 chapters' places, 1 KOReader document's place"

    kept = CliRunner().invoke(main, remove, input="n\n")
    assert kept.exit_code == 1
    assert f"Remove {said}? This cannot be undone [y/N]" in kept.output
    assert toshokan(config, "readers", "list")[0].startswith("mika")

    unasked = CliRunner().invoke(main, remove)  # no one to answer: nothing is removed
    assert unasked.exit_code == 1 and toshokan(config, "readers", "list") != []

    removed = CliRunner().invoke(main, remove, input="y\n")
    assert removed.exit_code == 0 and removed.output.endswith(f"removed {said}\n")
    assert toshokan(config, "readers", "list") == []
    assert store.positions("mika", "local", "paper-cranes") == {}

    toshokan(config, "readers", "add", "ren", "--password", "swordfish")
    assert toshokan(config, "readers", "remove", "ren", "--yes") == [
        "removed reader ren with 1 API key"
    ]


async def test_secrets_are_stored_only_as_argon2_hashes(config: Path) -> None:
    key = toshokan(config, "readers", "add", "mika", "--password", "hunter22")[-1]
    stored = stored_bytes(config)
    md5 = hashlib.md5(b"hunter22").hexdigest().encode()
    # tk_<id>_<secret>: the secret itself may contain "_".
    for secret in (b"hunter22", md5, key.encode(), key.split("_", 2)[2].encode()):
        assert secret not in stored
    assert b"$argon2id$" in stored


def stored_bytes(config: Path) -> bytes:
    """Everything the readers' database holds: SQLite's files, or PostgreSQL's rows."""
    settings = load_settings(config)
    if settings.cluster.database is None:
        files = (settings.host.data_dir).iterdir()
        return b"".join(path.read_bytes() for path in files if path.is_file())
    database = open_database(settings)
    with database.transaction() as cursor:
        rows = [
            row
            for table in ("readers", "reader_keys")
            for row in cursor.execute(f"SELECT * FROM {table}").fetchall()
        ]
    database.close()
    return repr(rows).encode()


async def test_with_no_readers_everyone_is_the_implicit_reader(
    config: Path, gate_for: Callable[..., ReaderGate]
) -> None:
    gate = gate_for(config)
    assert await gate.koreader("anyone", "anything", "c") == ""
    assert await gate.basic("", "", "c") == ""


async def test_failures_spend_the_attempt_budget(
    config: Path, gate_for: Callable[..., ReaderGate]
) -> None:
    toshokan(config, "readers", "add", "mika", "--password", "hunter22")
    gate = gate_for(config, attempts=2)
    for _ in range(2):
        with pytest.raises(InvalidCredentials):
            await gate.basic("mika", "guess", "203.0.113.9")
    with pytest.raises(RateLimited):
        await gate.basic("mika", "hunter22", "203.0.113.9")
    assert await gate.basic("mika", "hunter22", "198.51.100.1") == "mika"  # per client address


def test_an_older_write_never_overwrites_a_newer(tmp_path: Path, database_url: str | None) -> None:
    database = open_for(tmp_path, database_url)
    store = ProgressStore(database)
    ref = ChapterRef("local", "paper-cranes", "ch-1")
    assert store.record("mika", ref, Position(7, 20, False, 2000.0, "k", "Kobo"))
    assert not store.record("mika", ref, Position(3, 20, False, 1000.0, "p", "Phone"))
    assert store.position("mika", ref) == Position(7, 20, False, 2000.0, "k", "Kobo")
    assert store.record("mika", ref, Position(19, 20, True, 3000.0, "p", "Phone"))
    assert store.position("mika", ref) == Position(19, 20, True, 3000.0, "p", "Phone")
    assert store.position("ren", ref) is None
    assert store.record_document("mika", "abc", DocumentPosition("/body/p[2]", 0.1, 5.0))
    assert not store.record_document("mika", "abc", DocumentPosition("/body/p[1]", 0.0, 4.0))
    assert store.document("mika", "abc") == DocumentPosition("/body/p[2]", 0.1, 5.0)
    database.close()
