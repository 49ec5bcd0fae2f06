"""Ids: the slugs that name one thing packed into one string, and unpacked exactly.

A chapter's slug is unique only within its manga, a manga's only within its
source, so a client that keeps one string for a chapter or a series (Mihon keeps
a Komga series' id in its library, the Alethia app a chapter's key in its
database) is handed every slug above it packed into one. An id *is* its slugs:
nothing is remembered between requests, and an id names the same thing after a
restart and on every replica.

The core packs: a :class:`Packing` says which slugs an id holds and the alphabet
of each. Each face chooses how a packed id is spelled for its clients (a
:class:`Spelling`): Komga's opaque ids are :data:`OPAQUE`, the Alethia app's
chapter keys, which stand where a chapter slug stands, :data:`IN_SLUG`, and the
series a person names for a notification target :data:`JOINED`.
Unpacking checks the length, the number of slugs and each one's alphabet, so a
forged or stale id names nothing and never reaches an adapter.
"""

import base64
import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from toshokan.models.base import SLUG, SOURCE_SLUG

#: Longer than any id a face hands out (slugs are bounded by the sources); longer is no id.
MAX_ID = 1024


class Spelling(Protocol):
    """How a face writes the slugs of an id, and reads them back (None: not an id at all)."""

    def write(self, slugs: Sequence[str]) -> str: ...

    def read(self, text: str, count: int) -> Sequence[str] | None: ...


class _Joined:
    """The slugs joined by ``/``, which no slug holds: ``mangadex/frieren``, as a person types a
    series."""

    def write(self, slugs: Sequence[str]) -> str:
        return "/".join(slugs)

    def read(self, text: str, count: int) -> Sequence[str] | None:
        return text.split("/")


class _Opaque:
    """The slugs joined by ``/`` in base64's URL-safe alphabet, unpadded."""

    def write(self, slugs: Sequence[str]) -> str:
        return base64.urlsafe_b64encode(JOINED.write(slugs).encode()).decode().rstrip("=")

    def read(self, text: str, count: int) -> Sequence[str] | None:
        if not text.isascii():
            return None
        try:
            joined = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None
        return JOINED.read(joined, count)


_LENGTH = re.compile(r"[1-9][0-9]{0,3}")


class _InSlug:
    """Inside the slug alphabet ``[a-z0-9_-]``, readable: each slug but the last led by its
    length, ``<length>_<slug>_``, which says where it ends whatever it holds
    (``4_work_ch-1``)."""

    def write(self, slugs: Sequence[str]) -> str:
        return "".join(f"{len(slug)}_{slug}_" for slug in slugs[:-1]) + slugs[-1]

    def read(self, text: str, count: int) -> Sequence[str] | None:
        slugs, rest = [], text
        for _ in range(count - 1):
            length, _, rest = rest.partition("_")
            if not _LENGTH.fullmatch(length) or len(rest) <= int(length):
                return None
            slug, separator, rest = rest[: int(length)], rest[int(length)], rest[int(length) + 1 :]
            if separator != "_":
                return None
            slugs.append(slug)
        return [*slugs, rest]


#: Readable: for series a person names (a notification target's, ``source/manga``).
JOINED: Spelling = _Joined()
#: Opaque to the client: for ids it only stores and sends back.
OPAQUE: Spelling = _Opaque()
#: A slug itself: for ids that stand where a slug stands.
IN_SLUG: Spelling = _InSlug()


@dataclass(frozen=True)
class Packing:
    """The slugs an id holds, in order, by the alphabet each must be in."""

    alphabets: tuple[re.Pattern[str], ...]

    def pack(self, spelling: Spelling, *slugs: str) -> str:
        """The id of ``slugs``; the same slugs always give the same id."""
        return spelling.write(slugs)

    def unpack(self, spelling: Spelling, text: str) -> tuple[str, ...] | None:
        """The slugs ``text`` names, or None where it names nothing."""
        if not text or len(text) > MAX_ID:
            return None
        slugs = spelling.read(text, len(self.alphabets))
        if slugs is None or len(slugs) != len(self.alphabets):
            return None
        if not all(
            alphabet.fullmatch(slug) for alphabet, slug in zip(self.alphabets, slugs, strict=True)
        ):
            return None
        return tuple(slugs)


#: A manga: its source's slug and its own.
MANGA = Packing((SOURCE_SLUG, SLUG))
#: A chapter: its source's, its manga's and its own slug.
CHAPTER = Packing((SOURCE_SLUG, SLUG, SLUG))
#: A chapter within a source the path already names: its manga's slug and its own.
CHAPTER_IN_SOURCE = Packing((SLUG, SLUG))
