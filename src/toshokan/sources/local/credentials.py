"""Checking reader credentials against the operator's, without keeping them in the clear.

:class:`LocalAuth` reads what a library requires (Basic or an API key) from its
settings or the environment.

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

from toshokan.sdk import AuthType, Credentials
from toshokan.sources.local.settings import LocalSettings

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


def _secret(settings_value: object, env: str) -> str | None:
    if settings_value is None:
        return os.environ.get(env) or None
    value = getattr(settings_value, "get_secret_value", lambda: settings_value)()
    return str(value) or None


class LocalAuth:
    """The credentials a reader must present, held only as hashes."""

    def __init__(self, settings: LocalSettings, slug: str):
        prefix = f"TOSHOKAN_{slug.upper()}_"
        self.type = AuthType(settings.auth)
        self.username: str | None = None
        self.checker: SecretChecker | None = None
        if self.type is AuthType.BASIC:
            self.username = settings.username or os.environ.get(prefix + "USERNAME")
            self.checker = self._checker(
                _secret(settings.password_hash, prefix + "PASSWORD_HASH"),
                _secret(settings.password, prefix + "PASSWORD"),
                "password",
            )
            if not self.username:
                raise SecretConfigError(
                    f"auth = 'basic' needs `username` (or {prefix}USERNAME in the environment)"
                )
        elif self.type is AuthType.API_KEY:
            self.checker = self._checker(
                _secret(settings.api_key_hash, prefix + "API_KEY_HASH"),
                _secret(settings.api_key, prefix + "API_KEY"),
                "api_key",
            )

    @staticmethod
    def _checker(encoded: str | None, plain: str | None, name: str) -> SecretChecker:
        if encoded:
            return SecretChecker(validate_hash(encoded, f"{name}_hash"))
        if plain:
            return SecretChecker.from_plaintext(plain)
        raise SecretConfigError(
            f"authentication needs `{name}` or `{name}_hash` (or the matching "
            f"TOSHOKAN_<SLUG>_{name.upper()}[_HASH] environment variable)"
        )

    @property
    def required(self) -> bool:
        return self.type is not AuthType.NONE

    def verify(self, credentials: Credentials) -> bool:
        """Constant-time check; cheap after the first time thanks to the checker's cache."""
        if self.type is AuthType.NONE:
            return True
        if credentials.type is not self.type or self.checker is None:
            return False
        if self.type is AuthType.BASIC:
            user_ok = hmac.compare_digest(
                (credentials.username or "").encode(), (self.username or "").encode()
            )
            password_ok = self.checker.check(credentials.password or "")
            return user_ok and password_ok
        return self.checker.check(credentials.apiKey or "")
