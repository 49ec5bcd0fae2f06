"""What every request to the OPDS face starts from: the core, the source, the caller, the bounds.

Both catalogues (Atom at ``/_/opds``, JSON at ``/_/opds/v2``) resolve and
authorise a source the same way, read the same bounded query parameters and
build their links on the address the reader used, with the host's one link builder.
"""

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from toshokan.core import Caller, Core, HostedSource, Query, Urls, Visit, host_path
from toshokan.core.cache_control import PRIVATE_NO_CACHE, PUBLIC_FEED
from toshokan.core.http import Entry, enter, entry_of
from toshokan.core.readers import BY_CREDENTIALS, NotAReader
from toshokan.errors import InvalidCredentials, InvalidRequest
from toshokan.faces.opds.access import PASSING, challenge
from toshokan.faces.opds.signin import (
    AUTH_DOCUMENT,
    CATALOGUE,
    authentication_document,
    catalogue,
    refusal,
)
from toshokan.models import SourceConfiguration

PREFIX = host_path(CATALOGUE)
#: Titles per page of a list feed.
PAGE_SIZE = 20
#: Chapters per page of a series feed.
CHAPTERS_PER_PAGE = 50
#: Titles per source in a search over every source.
PER_SOURCE = 10
#: The longest search query the catalogue passes on.
MAX_QUERY = 200
#: The highest page number of any feed.
MAX_PAGE = 10_000


@dataclass
class CatalogueVisit:
    """One request to a source's part of the catalogue, authorised: its content is asked of
    the request's one :class:`~toshokan.core.Visit`."""

    core: Core
    source_visit: Visit
    #: The request as the face entered the core (its links built on first need).
    entry: Entry
    #: Who reads (:data:`~toshokan.core.progress.IMPLICIT_READER` on a host without readers).
    reader: str

    @property
    def urls(self) -> Urls:
        return self.entry.urls

    @property
    def hosted(self) -> HostedSource:
        return self.source_visit.hosted

    @property
    def config(self) -> SourceConfiguration:
        return self.source_visit.config

    @property
    def caller(self) -> Caller:
        return self.source_visit.caller

    @property
    def slug(self) -> str:
        return self.source_visit.slug

    @property
    def private(self) -> bool:
        return self.config.auth.required

    @property
    def holds_files(self) -> bool:
        """Whether the source's content is files here (it offers chapters for download).

        Then a feed may ask the core about every title or chapter it lists: each
        answer is a read of the source's own index, never an upstream request.
        """
        return self.source_visit.offers_downloads

    @property
    def root(self) -> str:
        """The catalogue's root, ``/_/opds``."""
        return catalogue(self.urls)

    def url(self, *parts: str, query: Query | None = None, template: str = "") -> str:
        """An address of this source's part of the Atom catalogue (``/_/opds/<slug>/...``)."""
        return catalogue(self.urls, self.slug, *parts, query=query, template=template)

    @property
    def v2_root(self) -> str:
        """The OPDS 2.0 catalogue's root, ``/_/opds/v2``."""
        return catalogue(self.urls, "v2")

    def v2_url(self, *parts: str, query: Query | None = None, template: str = "") -> str:
        """An address of this source's part of the OPDS 2.0 catalogue (``/_/opds/v2/<slug>/...``)."""
        return catalogue(self.urls, "v2", self.slug, *parts, query=query, template=template)


def cache_control(private: bool) -> dict[str, str]:
    """Feeds change as sources do: a minute in shared caches, never when they are someone's."""
    return {"Cache-Control": PRIVATE_NO_CACHE if private else PUBLIC_FEED}


def source_route(
    handler: Callable[[Request, CatalogueVisit], Awaitable[Response]],
) -> Callable[..., Any]:
    """Tell the reader, resolve and authorise the source; a refusal becomes the Basic challenge
    readers answer (the host's when no reader signed in, the source's when it stays locked)."""

    async def endpoint(request: Request) -> Response:
        slug = request.path_params["source"]
        try:
            entry = await enter(
                request, slug, signing=BY_CREDENTIALS, passing=PASSING, authorise=True
            )
        except NotAReader as refused:
            return refused_reader(request, refused)
        visit, reader = entry.visit, entry.reader
        assert visit is not None and reader is not None  # a source and a signing were given
        try:
            if entry.refused is not None:
                raise entry.refused
            return await handler(request, CatalogueVisit(entry.core, visit, entry, reader))
        except InvalidCredentials as refused:
            raise challenge(visit.config, refused.message) from None

    return endpoint


def signed_in(handler: Callable[[Request, Entry], Awaitable[Response]]) -> Callable[..., Any]:
    """A page of no one source (the catalogue's root, its search) for the reader who asks: with
    readers on the host, only for one of them (:func:`signed_reader`)."""

    async def endpoint(request: Request) -> Response:
        try:
            entry = await enter(request, signing=BY_CREDENTIALS)
        except NotAReader as refused:
            return refused_reader(request, refused)
        return await handler(request, entry)

    return endpoint


def signed_reader(entry: Entry) -> str:
    """The reader a :func:`signed_in` page is for."""
    assert entry.reader is not None  # signed_in enters with a signing
    return entry.reader


def refused_reader(request: Request, refused: NotAReader) -> Response:
    """The host has readers and the request names none of them: the challenge to sign in."""
    entry = entry_of(request)
    return refusal(entry.core, entry.urls, refused.message)


async def authentication(request: Request) -> Response:
    """``GET /_/opds/authentication.json``: how to sign in, open to anyone as the draft requires."""
    entry = entry_of(request)
    document = authentication_document(entry.core, entry.urls)
    return Response(json.dumps(document), media_type=AUTH_DOCUMENT)


def page_of(request: Request) -> int:
    text = request.query_params.get("page", "1")
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_PAGE:
        raise InvalidRequest(f"page must be a whole number from 1 to {MAX_PAGE}.")
    return int(text)


def query_of(request: Request, name: str = "q") -> str:
    query = request.query_params.get(name, "").strip()
    if len(query) > MAX_QUERY:
        raise InvalidRequest(f"A search is at most {MAX_QUERY} characters.")
    return query
