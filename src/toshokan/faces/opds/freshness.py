"""``Last-Modified`` and ``ETag`` on every feed, and ``HEAD`` and conditional requests answered
from them without building the feed again.

KOReader asks ``HEAD`` before each catalogue ``GET`` and keeps the feed it parsed
under the URL and the ``Last-Modified`` the ``HEAD`` answered; with none, it
fetches every feed again, every time. A feed is built from the core's answers
(searches, details, chapter lists, kept a few minutes, dropped at once when a
source says its content changed) and from the reader's places. So the
validators of a feed the face built are remembered in the core's cache for as
long as those answers are (:data:`SECONDS`), under a key that names:

- who asks (the reader, and a digest of the credentials sent, since a source
  locked with its own may answer each account its own catalogue),
- the feed (path and query),
- the generation of the source's answers (bumped when its content changes),
- the reader's latest place, anywhere (a page read moves ``pse:lastRead``).

While that key is remembered, a ``HEAD`` is answered with its headers and a
conditional ``GET`` the client's copy matches with ``304``, neither building
anything; a ``GET`` is built and carries the same validators, so a client sees
one ``Last-Modified`` per version of a feed. The ``ETag`` is weak: what stays
the same is what the feed says, not each byte (a feed's ``updated`` and its
signed image links change as time passes). The edge charges a ``HEAD`` and a
``304`` a tenth of a full answer (:mod:`toshokan.edge.ratelimit`).
"""

import email.utils
import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import Core
from toshokan.core.cache import Kind
from toshokan.core.cache_control import REVALIDATE
from toshokan.core.http import Entry
from toshokan.faces.opds.context import CatalogueVisit, signed_reader

#: The kind of the core's cache that holds feeds' validators.
VALIDATORS = "opds-validators"
#: Seconds a feed's validators hold: as long as the search and chapter answers it is built
#: from are kept by default ([cache] search and chapters).
SECONDS = 120
#: What the face keeps through the core's cache.
CACHED = {VALIDATORS: Kind(ttl=SECONDS)}
#: Request headers that say who is asking of a source locked with its own account.
CREDENTIALS = ("authorization", "x-api-key", "cookie")

Asker = TypeVar("Asker", CatalogueVisit, Entry)


@dataclass(frozen=True)
class Validators:
    """What a ``HEAD`` of a feed answers, remembered from the ``GET`` or ``HEAD`` that built it."""

    etag: str
    modified: str
    length: int
    media_type: str
    cache_control: str

    def headers(self) -> dict[str, str]:
        return {
            "ETag": self.etag,
            "Last-Modified": self.modified,
            "Cache-Control": self.cache_control,
        }

    def matched_by(self, request: Request) -> bool:
        """Whether the client's copy is this version (``If-None-Match`` first, as RFC 9110)."""
        tags = request.headers.get("if-none-match")
        if tags is not None:
            sent = {tag.strip().removeprefix("W/") for tag in tags.split(",")}
            return "*" in sent or self.etag.removeprefix("W/") in sent
        since = request.headers.get("if-modified-since")
        if not since:
            return False
        try:
            return email.utils.parsedate_to_datetime(since) >= email.utils.parsedate_to_datetime(
                self.modified
            )
        except (TypeError, ValueError):
            return False


def validated(
    handler: Callable[[Request, Asker], Awaitable[Response]],
) -> Callable[[Request, Asker], Awaitable[Response]]:
    """``handler``'s feeds with validators; a ``HEAD`` or a matching conditional ``GET`` of a
    feed whose validators are remembered is answered without calling it."""

    async def endpoint(request: Request, asker: Asker) -> Response:
        core = asker.core
        key = await _key(core, request, asker)
        known: Validators | None = core.cache.peek(VALIDATORS, key)
        if known is not None:
            if request.method == "HEAD":
                return _head(known)
            if known.matched_by(request):
                return Response(status_code=304, headers=known.headers())
        response = await handler(request, asker)
        if response.status_code != 200 or not isinstance(response.body, bytes):
            return response
        built = _validators(response)
        # The first version built under the key stays its version until the key expires.
        kept = await core.cache.get_or_compute(VALIDATORS, key, _ready(built))
        response.headers.update(kept.headers())
        if request.method == "GET" and kept.matched_by(request):
            return Response(status_code=304, headers=kept.headers())
        return response

    return endpoint


def _head(known: Validators) -> Response:
    headers = {
        **known.headers(),
        "Content-Length": str(known.length),
        "Content-Type": known.media_type,
    }
    return Response(status_code=200, headers=headers)


def _validators(response: Response) -> Validators:
    body = bytes(response.body)
    digest = hashlib.sha256(body).hexdigest()[:32]
    return Validators(
        etag=f'W/"{digest}"',
        modified=email.utils.formatdate(time.time(), usegmt=True),
        length=len(body),
        media_type=response.headers.get("content-type", ""),
        cache_control=response.headers.get("cache-control", REVALIDATE),
    )


def _ready(value: Validators) -> Callable[[], Awaitable[Validators]]:
    async def compute() -> Validators:
        return value

    return compute


async def _key(core: Core, request: Request, asker: CatalogueVisit | Entry) -> tuple[object, ...]:
    """Who asks, which feed, which version of the source's answers and of the reader's places."""
    generations: tuple[int, ...]
    if isinstance(asker, CatalogueVisit):
        reader, generations = asker.reader, (core.cache.generation(asker.slug),)
    else:
        reader = signed_reader(asker)
        generations = tuple(core.cache.generation(h.slug) for h in core.sources.serving())
    sent = "\n".join(request.headers.get(name, "") for name in CREDENTIALS)
    who = hashlib.sha256(sent.encode()).hexdigest()[:32]
    latest = await core.progress.arecent(reader, 1)
    place = latest[0][1].updated if latest else 0.0
    feed = (request.url.path, request.url.query)
    return (reader, who, feed, generations, place)
