"""Keys a source files or signs things by, derived from the host's ``[host] secret``.

A source that remembers something per credential (a reader's account on its
upstream) or hands out links only it should honour (its own image routes) needs
digests nobody can compute without the host's secret, and from which no password
can be guessed offline. Each purpose of each source gets a key of its own, so one
purpose's digests say nothing about another's, and every replica sharing the
secret computes the same ones.
"""

import hashlib
import hmac


class DerivedKey:
    """An HMAC-SHA256 key for one ``purpose`` of the source ``slug``, derived from ``secret``."""

    def __init__(self, secret: bytes, purpose: str, slug: str):
        derivation = b"\x00".join((secret, purpose.encode(), slug.encode()))
        self._key = hashlib.sha256(derivation).digest()

    def digest(self, *parts: str, length: int = 64) -> str:
        """The HMAC (hex, its first ``length`` characters) of ``parts``, NUL-separated."""
        message = "\x00".join(parts).encode("utf-8", "surrogatepass")
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()[:length]

    def matches(self, digest: str, *parts: str, length: int = 64) -> bool:
        """Whether ``digest`` is :meth:`digest` of ``parts`` (compared in constant time)."""
        expected = self.digest(*parts, length=length)
        return hmac.compare_digest(expected.encode(), digest.encode("utf-8", "replace"))
