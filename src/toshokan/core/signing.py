"""Signed, expiring URLs for what the host serves itself (page images, covers).

Image loaders send no auth headers, so when a source requires authentication
the links the host hands out carry an expiry and an HMAC of their path
(``?exp=...&sig=...``) instead. A leaked URL stops working after the TTL, and
every replica with the same ``[host] secret`` verifies it.
"""

import hashlib
import hmac
import time

from toshokan.errors import InvalidCredentials

#: Expiries are rounded up to the minute, so a page list fetched twice in a row gives the same URLs.
GRANULARITY = 60


class ExpiredLink(InvalidCredentials):
    """A genuine link past its expiry: a stale page list, not a guessed signature."""


def sign(secret: bytes, path: str, expires: int) -> str:
    """The signature of ``path`` valid until ``expires`` (Unix seconds)."""
    message = f"{path}\n{expires}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:40]


def expiry(ttl: int, now: float | None = None) -> int:
    now = time.time() if now is None else now
    return (int(now) // GRANULARITY + 1) * GRANULARITY + ttl


def verify(
    secret: bytes, path: str, expires: str, signature: str, *, now: float | None = None
) -> int:
    """The expiry of a genuine, unexpired signature; ``InvalidCredentials`` otherwise."""
    # isascii: str.isdigit also accepts digits such as '²' that int() refuses.
    if not (expires.isascii() and expires.isdigit()) or len(expires) > 12:
        raise InvalidCredentials("The image URL signature is malformed.")
    expected = sign(secret, path, int(expires))
    if not hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")):
        raise InvalidCredentials("The image URL signature is invalid.")
    if int(expires) < (now if now is not None else time.time()):
        raise ExpiredLink("The image URL has expired; fetch the page list again.")
    return int(expires)
