"""Links from readers to the catalogue's images, through the host.

Readers never send credentials with image requests, and the catalogue wants
them, so covers and pages point at the host's own routes, which fetch with the
credentials of the account the link names (the operator's, or the reader's
who asked for it: see :mod:`.accounts`). A link names its upstream URL
(encoded, key taken out) and that account, and carries an HMAC of both under
the host's secret: the host only ever fetches what it linked to itself, for
whom it linked it, never an arbitrary path of the catalogue's server.
"""

import hashlib
import hmac


class Signer:
    def __init__(self, secret: bytes, slug: str):
        self._key = hashlib.sha256(secret + b"\x00opds-links\x00" + slug.encode()).digest()

    def sign(self, *parts: str) -> str:
        message = "\x00".join(parts).encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()[:24]

    def check(self, signature: str, *parts: str) -> bool:
        return hmac.compare_digest(signature.encode(), self.sign(*parts).encode())
