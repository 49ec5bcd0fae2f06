"""Secrets adapters share between processes (readers' upstream sign-ins), sealed in Redis.

Each value is encrypted and authenticated with Fernet (AES-128-CBC and
HMAC-SHA256, from ``cryptography``) under a key derived from the host's
secret, so Redis, its backups and anyone who can read them hold nothing
usable, and a value altered there is refused rather than used. Every replica
has the same ``[host] secret`` and so the same key. While Redis does not
answer nothing is kept or found: the adapter's own memory serves its process.
"""

import base64
import contextlib
import hashlib
import hmac

from toshokan.core.shared import SharedRedis, Unavailable


def sealing_key(secret: bytes, purpose: bytes = b"toshokan shared secrets v1") -> bytes:
    """The Fernet key of the host's secret for ``purpose``: a key of its own, so no other use
    of the secret leaks into this one."""
    derived = hmac.new(secret, purpose, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(derived)


class SealedSecrets:
    """:class:`toshokan.sdk.context.SharedSecrets` in Redis, encrypted with the host's secret."""

    def __init__(self, redis: SharedRedis, secret: bytes, prefix: str = "toshokan:secret:"):
        from cryptography.fernet import Fernet, InvalidToken

        self.redis = redis
        self.fernet = Fernet(sealing_key(secret))
        self.invalid = InvalidToken
        self.prefix = prefix

    async def keep(self, name: str, value: bytes, seconds: int) -> None:
        sealed = self.fernet.encrypt(value)
        with contextlib.suppress(Unavailable):
            await self.redis.run(lambda r: r.set(self.prefix + name, sealed, ex=seconds))

    async def find(self, name: str) -> bytes | None:
        try:
            sealed = await self.redis.run(lambda r: r.get(self.prefix + name))
        except Unavailable:
            return None
        if sealed is None:
            return None
        try:
            opened: bytes = self.fernet.decrypt(sealed)
        except self.invalid:  # another secret sealed it, or it was altered: not ours to use
            return None
        return opened
