"""What the core hands faces: who asks (:class:`Caller`), what authorisation decided
(:class:`Access`), and answers serialised once (:class:`Answer`); and the checks every request's
slugs pass before anything is asked of a source.

:data:`SHARED_CODECS` say which kinds of the core's cache every process of the
host shares through ``[cluster] redis``, and how each is kept there.
"""

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, TypeAdapter

from toshokan.core.hashing import etag_of
from toshokan.core.shared.results import Codec
from toshokan.errors import HostError
from toshokan.models import Chapter, Manga, SearchResponse
from toshokan.models.base import SLUG

T = TypeVar("T")
CHAPTER_LIST = TypeAdapter(list[Chapter])
PAGE_LIST = TypeAdapter(list[str])


@dataclass(frozen=True)
class Caller:
    """Who is asking, as every face can tell: their headers, the address they used, their address.

    ``base_url`` is the host's public address as this caller reached it (no
    trailing slash): links in answers are built on it.
    """

    headers: Mapping[str, str]
    base_url: str
    client: str = "unknown"


@dataclass(frozen=True)
class Answer(Generic[T]):
    """A result and its JSON, serialised once when computed and shared by every cache hit.

    ``private`` says the answer depended on the caller's credentials, so no
    shared cache may keep it.
    """

    value: T
    body: bytes
    private: bool = False

    @cached_property
    def etag(self) -> str:
        """Computed once per answer: every cache hit shares it."""
        return etag_of(self.body)


@dataclass(frozen=True)
class Access:
    """What authorisation decided for one request: the auth headers to forward, and their key."""

    auth: dict[str, str]
    key: str


def json_of(value: Any, exclude_none: bool) -> bytes:
    if isinstance(value, BaseModel):
        return value.model_dump_json(exclude_none=exclude_none).encode()
    if isinstance(value, list) and all(isinstance(item, Chapter) for item in value):
        return CHAPTER_LIST.dump_json(value)
    return json.dumps(value, separators=(",", ":")).encode()


def quoted(value: str) -> str:
    """A client's string, short and safe to echo in a message."""
    return repr(value[:60] + ("…" if len(value) > 60 else ""))


def check_slug(slug: str, not_found: type[HostError]) -> None:
    """Anything outside the slug alphabet cannot exist; it never reaches an adapter."""
    if not SLUG.fullmatch(slug):
        raise not_found(
            f"{not_found.default_message.rstrip('.')}: {quoted(slug)} is not a valid slug."
        )


def _codec(read: Callable[[bytes], Any]) -> Codec[Answer[Any]]:
    return Codec(encode=lambda answer: answer.body, decode=lambda body: Answer(read(body), body))


#: An authorisation decision, kept as one byte.
DECISION: Codec[bool] = Codec(encode=lambda allowed: b"1" if allowed else b"0", decode=b"1".__eq__)

#: The kinds of the core's cache shared by every process: those an upstream is asked for.
#:
#: Content answers are kept as their JSON body, from which the value is read back, so a
#: process that did not compute an answer serves the same bytes. Authorisation decisions are
#: shared too: a source that requires authentication is asked once for the host, not once a
#: replica, whether some credentials may pass. Sharing one is safe: it is a yes or no, keyed
#: by the source and an HMAC of the credentials under the host's secret, so neither the
#: credentials nor anything they open is in Redis, and a host with another secret never
#: finds it.
#:
#: The other kinds stay in each process, for their cost would only grow: ``configuration``
#: and ``manifest`` are each adapter's declaration, made without asking any upstream and
#: keyed by the sources' generations, so a Redis round trip would cost more than making them
#: again; ``download`` is offered by a source whose files are here (the local library),
#: answered from its own index without an upstream, so sharing it would save nothing either.
SHARED_CODECS: dict[str, Codec[Any]] = {
    "search": _codec(SearchResponse.model_validate_json),
    "manga": _codec(Manga.model_validate_json),
    "chapters": _codec(CHAPTER_LIST.validate_json),
    "authorization": DECISION,
}
