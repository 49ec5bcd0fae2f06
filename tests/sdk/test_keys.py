"""Keys derived from the host's secret: one per purpose and source, unforgeable without it."""

from toshokan.sdk import DerivedKey

SECRET = b"host-secret-0123456789abcdef0123"


def test_each_purpose_source_and_secret_has_its_own_digests():
    digest = DerivedKey(SECRET, "links", "shelf").digest("a", "b")
    others = [
        DerivedKey(SECRET, "accounts", "shelf").digest("a", "b"),
        DerivedKey(SECRET, "links", "comics").digest("a", "b"),
        DerivedKey(b"another-secret-0123456789abcdef", "links", "shelf").digest("a", "b"),
        DerivedKey(SECRET, "links", "shelf").digest("ab"),
    ]
    assert len(digest) == 64 and digest not in others
    # The same on every replica with the same secret.
    assert DerivedKey(SECRET, "links", "shelf").digest("a", "b") == digest


def test_parts_are_kept_apart():
    key = DerivedKey(SECRET, "accounts", "shelf")
    assert key.digest("ann", "pass") != key.digest("annp", "ass")


def test_a_digest_matches_only_what_it_was_made_of():
    key = DerivedKey(SECRET, "links", "shelf")
    signature = key.digest("code", "who", length=24)
    assert len(signature) == 24
    assert key.matches(signature, "code", "who", length=24)
    assert not key.matches(signature, "code", "someone else", length=24)
    altered = signature[:-1] + ("1" if signature[-1] == "0" else "0")
    assert not key.matches(altered, "code", "who", length=24)
    assert not key.matches("", "code", "who", length=24)
    assert not key.matches(signature[:12], "code", "who", length=24)
    assert not key.matches("é" * 24, "code", "who", length=24)
