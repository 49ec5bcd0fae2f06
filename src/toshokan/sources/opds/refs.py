"""Manga and chapter slugs: readable, stable, and carrying where the work lives upstream.

A manga slug is ``<title words>--<code>``: the code is the base32 of the
feed's path on the catalogue's server (and, for a book standing alone as its
own series, the book's entry id), so any replica can answer for any slug
without a table of what it has seen. The key a URL may carry is replaced by a
placeholder before encoding and put back after, so it is never in a slug, and
a decoded path is only ever fetched from the catalogue's own server.

A chapter slug is ``<title words>-<hash of the book's entry id>``: chapters are
always found again by listing their series.
"""

import base64
import binascii
import hashlib
from dataclasses import dataclass

import httpx

from toshokan.sdk import slugify

KEY_PLACEHOLDER = "{api_key}"
_SEPARATOR = "--"


@dataclass(frozen=True)
class MangaRef:
    """A series (every book of ``feed``) or a lone book (the entry ``book_id`` of ``feed``)."""

    feed: str
    book_id: str | None = None


class Refs:
    """Encodes and decodes references against one catalogue's root URL and key."""

    def __init__(self, root: str, api_key: str):
        url = httpx.URL(root)
        self.origin = f"{url.scheme}://{url.netloc.decode()}"
        self.api_key = api_key

    def encode(self, url: str, extra: str | None = None) -> str | None:
        """A ``[a-z2-7]`` code for a URL on the catalogue's server (None for any other server)."""
        if not url.startswith(self.origin + "/"):
            return None
        path = url[len(self.origin) :]
        if self.api_key:
            path = path.replace(self.api_key, KEY_PLACEHOLDER)
        if "\n" in path or "\\" in path or path.startswith("//"):
            return None
        raw = path if extra is None else f"{path}\n{extra}"
        return base64.b32encode(raw.encode()).decode().rstrip("=").lower()

    def decode(self, code: str) -> tuple[str, str | None] | None:
        """The URL (and extra) a code names, or None when it is not a code of ours."""
        if not code or len(code) > 4000 or not code.isalnum():
            return None
        try:
            raw = base64.b32decode(code.upper() + "=" * (-len(code) % 8)).decode()
        except (binascii.Error, ValueError):
            return None
        path, newline, extra = raw.partition("\n")
        if not path.startswith("/") or path.startswith("//") or "\\" in path:
            return None
        if self.api_key:
            path = path.replace(KEY_PLACEHOLDER, self.api_key)
        return self.origin + path, (extra if newline else None)

    def manga_slug(self, title: str, ref: MangaRef) -> str | None:
        """The slug of ``ref``, or None when its feed is on another server (not followed)."""
        code = self.encode(ref.feed, ref.book_id)
        if code is None:
            return None
        return f"{slugify(title, fallback='work', max_length=40)}{_SEPARATOR}{code}"

    def manga_ref(self, slug: str) -> MangaRef | None:
        """What a slug names, or None when it is not one of ours."""
        _, separator, code = slug.rpartition(_SEPARATOR)
        decoded = self.decode(code) if separator else None
        if decoded is None:
            return None
        return MangaRef(feed=decoded[0], book_id=decoded[1] or None)


def chapter_slug(title: str, entry_id: str) -> str:
    digest = hashlib.sha256(entry_id.encode()).hexdigest()[:12]
    return f"{slugify(title, fallback='chapter', max_length=40)}-{digest}"
