"""Links from readers to the catalogue's images, through the host.

Readers never send credentials with image requests, and the catalogue wants
them, so covers and pages point at the host's own routes, which fetch with the
credentials of the account the link names (the operator's, or the reader's
who asked for it: see :mod:`.accounts`). A link names its upstream URL
(encoded, key taken out) and that account, and carries an HMAC of both under
the host's secret: the host only ever fetches what it linked to itself, for
whom it linked it, never an arbitrary path of the catalogue's server.
"""

from toshokan.sdk import DerivedKey

#: Hex characters of a link's signature: 96 bits, short enough for a URL.
SIGNATURE_LENGTH = 24


class Signer:
    def __init__(self, secret: bytes, slug: str):
        self._key = DerivedKey(secret, "opds-links", slug)

    def sign(self, *parts: str) -> str:
        return self._key.digest(*parts, length=SIGNATURE_LENGTH)

    def check(self, signature: str, *parts: str) -> bool:
        return self._key.matches(signature, *parts, length=SIGNATURE_LENGTH)
