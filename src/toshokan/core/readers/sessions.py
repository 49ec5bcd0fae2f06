"""Sessions: a signed, expiring token naming a reader, which a browser keeps in a cookie.

A reader signs in once with a password or an API key (through
:class:`~toshokan.core.readers.gate.ReaderGate`, which counts failures); from
then on the browser sends only this token. It holds the reader's name and an
expiry signed with the host secret, never the password, so every replica with
the same ``[host] secret`` accepts it and nothing needs storing. Each use still
checks that the reader exists (one indexed query): a removed reader's sessions
end at once, and nothing they send is kept for them again.

Every face that signs browsers in (the web reader, later the Komga API) sets
the same cookie, :data:`SESSION_COOKIE`, with the same lifetime.
"""

import asyncio
import base64
import binascii
import hmac
import time

from toshokan.core.readers.gate import ReaderGate
from toshokan.core.signing import sign

#: The cookie every face keeps a reader's session in.
SESSION_COOKIE = "toshokan_session"
#: How long a session lasts: a month of reading without signing in again.
SESSION_SECONDS = 30 * 24 * 3600
#: Signed with the host secret under this purpose, so no other signature (an image link's)
#: can pass for a session.
PURPOSE = "reader-session"
#: A token is far shorter than this; anything longer is not one of ours, and is not decoded.
MAX_TOKEN = 256


def _encoded(name: str) -> str:
    """The name in the cookie's alphabet (a reader's name may hold ``@`` or ``+``)."""
    return base64.urlsafe_b64encode(name.encode()).decode().rstrip("=")


def _decoded(text: str) -> str | None:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


class Sessions:
    """Issues and checks session tokens over one host's readers and secret."""

    def __init__(self, gate: ReaderGate, seconds: int = SESSION_SECONDS):
        self.gate = gate
        self.seconds = seconds

    def issue(self, reader: str, now: float | None = None) -> str:
        """A token naming ``reader`` until ``seconds`` from now."""
        expires = int(time.time() if now is None else now) + self.seconds
        name = _encoded(reader)
        return f"{name}.{expires}.{self._signature(name, expires)}"

    def _signature(self, name: str, expires: int) -> str:
        return sign(self.gate.secret, f"{PURPOSE}\n{name}", expires)

    def named(self, token: str, now: float | None = None) -> str | None:
        """The reader a genuine, unexpired token names; None for anything else."""
        if len(token) > MAX_TOKEN or token.count(".") != 2:
            return None
        name, expires, signature = token.split(".")
        if not (expires.isascii() and expires.isdigit()) or len(expires) > 12:
            return None
        expected = self._signature(name, int(expires))
        if not hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")):
            return None
        if int(expires) < (time.time() if now is None else now):
            return None
        return _decoded(name) or None

    async def reader(self, token: str) -> str | None:
        """The reader a genuine, unexpired token names, if they still exist."""
        name = self.named(token)
        if name is None:
            return None
        stored = await asyncio.to_thread(self.gate.readers.stored, name)
        return None if stored is None else name
