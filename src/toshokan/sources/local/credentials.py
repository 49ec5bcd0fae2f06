"""Checking reader credentials against the operator's, without keeping them in the clear.

Plaintext secrets from the configuration are hashed once at start-up
(scrypt, random salt) and forgotten; precomputed hashes are used as given.
Checks compare in constant time. Because the host re-verifies on every
request and scrypt is deliberately slow, a successful or failed check is
remembered under a keyed digest of what was presented (never the secret itself).
"""

import base64
import hashlib
import hmac
import os
import secrets
from collections import OrderedDict

SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1


class SecretConfigError(ValueError):
    """A secret setting that cannot be used; the message names the setting, never the value."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def hash_secret(secret: str, *, salt: bytes | None = None) -> str:
    """``scrypt$N$r$p$salt$hash`` for ``secret``: what ``password_hash``/``api_key_hash`` hold."""
    salt = salt or os.urandom(16)
    digest = hashlib.scrypt(
        secret.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32
    )
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(digest)}"


def check_hash(secret: str, encoded: str) -> bool:
    """Whether ``secret`` matches an ``scrypt$...`` or ``pbkdf2_sha256$iterations$salt$hash`` string."""
    parts = encoded.strip().split("$")
    try:
        if parts[0] == "scrypt" and len(parts) == 6:
            n, r, p = int(parts[1]), int(parts[2]), int(parts[3])
            salt, expected = _unb64(parts[4]), _unb64(parts[5])
            actual = hashlib.scrypt(
                secret.encode(), salt=salt, n=n, r=r, p=p, dklen=len(expected), maxmem=2**27
            )
        elif parts[0] == "pbkdf2_sha256" and len(parts) == 4:
            iterations, salt, expected = int(parts[1]), _unb64(parts[2]), _unb64(parts[3])
            actual = hashlib.pbkdf2_hmac("sha256", secret.encode(), salt, iterations, len(expected))
        else:
            return False
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(actual, expected)


def validate_hash(encoded: str, setting: str) -> str:
    scheme = encoded.strip().split("$", 1)[0]
    if scheme not in ("scrypt", "pbkdf2_sha256") or not (
        (scheme == "scrypt" and encoded.count("$") == 5)
        or (scheme == "pbkdf2_sha256" and encoded.count("$") == 3)
    ):
        raise SecretConfigError(
            f"{setting} is not a hash from `toshokan hash-secret` (expected scrypt$... or pbkdf2_sha256$...)"
        )
    return encoded.strip()


class SecretChecker:
    """One configured secret (stored hashed) and a small cache of recent verdicts."""

    def __init__(self, encoded: str, *, cache_size: int = 256):
        self._encoded = encoded
        self._key = secrets.token_bytes(32)
        self._cache: OrderedDict[bytes, bool] = OrderedDict()
        self._cache_size = cache_size

    @classmethod
    def from_plaintext(cls, secret: str) -> "SecretChecker":
        return cls(hash_secret(secret))

    def check(self, presented: str) -> bool:
        marker = hmac.new(self._key, presented.encode(), hashlib.sha256).digest()
        known = self._cache.get(marker)
        if known is not None:
            self._cache.move_to_end(marker)
            return known
        verdict = check_hash(presented, self._encoded)
        self._cache[marker] = verdict
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return verdict
