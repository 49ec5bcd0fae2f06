"""What the host derives from its ``[host] secret``: signed, expiring URLs for what it serves
itself (page images, covers), and the keys it files answers and sessions under by credentials.

Image loaders send no auth headers, so when a source requires authentication
the links the host hands out carry an expiry and an HMAC of their path
(``?exp=...&sig=...``) instead. A leaked URL stops working after the TTL, and
every replica with the same ``[host] secret`` verifies it.

Answers, page lists and sessions that depended on a caller's credentials are
kept under :func:`credential_key`: an HMAC under the secret, so a cache (or a
Redis holding it) never holds anything a password could be guessed from offline.
"""

import hashlib
import hmac
import json
import time
from collections.abc import Mapping

from toshokan.errors import InvalidCredentials

#: Expiries are rounded up to the minute, so a page list fetched twice in a row gives the same URLs.
GRANULARITY = 60


class ExpiredLink(InvalidCredentials):
    """A genuine link past its expiry: a stale page list, not a guessed signature."""


def sign(secret: bytes, path: str, expires: int) -> str:
    """The signature of ``path`` valid until ``expires`` (Unix seconds)."""
    message = f"{path}\n{expires}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:40]


def credential_key(secret: bytes, credentials: Mapping[str, str]) -> str:
    """The key of what depended on these credentials (header or field names to values);
    ``""`` when there are none."""
    if not credentials:
        return ""
    message = json.dumps(sorted(credentials.items())).encode("utf-8", "surrogatepass")
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def signed_query(secret: bytes, message: str, ttl: int) -> dict[str, str]:
    """The ``exp`` and ``sig`` query parameters of a link to ``message``, valid ``ttl`` seconds
    (rounded up to the minute)."""
    expires = expiry(ttl)
    return {"exp": str(expires), "sig": sign(secret, message, expires)}


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
