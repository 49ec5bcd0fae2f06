"""Session tokens: a reader's name and an expiry signed with the host secret, nothing more."""

from pathlib import Path

import pytest
from argon2 import PasswordHasher

from toshokan.core.access import AttemptGate
from toshokan.core.cache import ResultCache
from toshokan.core.database import SqliteDatabase, default_database_path
from toshokan.core.limits import MovingWindowLimit
from toshokan.core.readers import ReaderGate, Readers, Sessions

pytestmark = pytest.mark.anyio

NOW = 1_700_000_000.0


def gate(tmp_path: Path, secret: bytes = b"host secret") -> ReaderGate:
    readers = Readers(SqliteDatabase(default_database_path(tmp_path)), PasswordHasher(time_cost=1))
    cache = ResultCache({}, 16)
    return ReaderGate(readers, AttemptGate(MovingWindowLimit(5, "t")), secret, cache)


def test_a_token_names_its_reader_until_it_expires(tmp_path: Path) -> None:
    sessions = Sessions(gate(tmp_path), seconds=3600)
    token = sessions.issue("mika+web@home", now=NOW)
    assert "mika" not in token  # the name is encoded, never in the clear or with a password
    assert sessions.named(token, now=NOW + 3599) == "mika+web@home"
    assert sessions.named(token, now=NOW + 3601) is None


def test_a_changed_name_expiry_or_secret_is_no_session(tmp_path: Path) -> None:
    sessions = Sessions(gate(tmp_path), seconds=3600)
    name, expires, signature = sessions.issue("mika", now=NOW).split(".")
    other, _, _ = sessions.issue("ren", now=NOW).split(".")
    assert sessions.named(f"{other}.{expires}.{signature}", now=NOW) is None
    assert sessions.named(f"{name}.{int(expires) + 10**6}.{signature}", now=NOW) is None
    assert sessions.named(f"{name}.{expires}", now=NOW) is None
    assert sessions.named("x" * 300, now=NOW) is None
    elsewhere = Sessions(gate(tmp_path / "other", secret=b"another host"), seconds=3600)
    assert elsewhere.named(f"{name}.{expires}.{signature}", now=NOW) is None


async def test_a_removed_readers_token_names_no_one(tmp_path: Path) -> None:
    readers_gate = gate(tmp_path)
    readers_gate.readers.add("mika", "hunter22")
    sessions = Sessions(readers_gate)
    token = sessions.issue("mika")
    assert await sessions.reader(token) == "mika"
    readers_gate.readers.remove("mika")
    assert await sessions.reader(token) is None
