"""One model of a catalogue page, whichever OPDS version the server speaks.

The Atom (OPDS 1.2) and JSON (OPDS 2.0) readers both produce a :class:`Feed`,
so everything above them (search, series, chapters, pages) is written once.
Every URL in it is absolute, resolved against the page it came from.
"""

from dataclasses import dataclass, field
from datetime import datetime

#: Most pages a streamed book may declare; past it the count is not believed.
MAX_STREAM_PAGES = 5000


@dataclass(frozen=True)
class Stream:
    """An OPDS Page Streaming Extension link: one image per page, numbered from 0."""

    template: str
    count: int


@dataclass(frozen=True)
class Acquisition:
    """A download of the whole book (a CBZ, CBR, PDF...)."""

    href: str
    media_type: str


@dataclass(frozen=True)
class Facet:
    """A link to the same feed sorted or filtered another way."""

    group: str
    title: str
    href: str


@dataclass
class FeedEntry:
    """A book (it has a stream or an acquisition) or a link to another feed (a series, a shelf)."""

    id: str
    title: str
    updated: datetime | None = None
    published: datetime | None = None
    authors: list[str] = field(default_factory=list)
    summary: str = ""
    categories: list[str] = field(default_factory=list)
    language: str = ""
    series: str = ""
    position: float | None = None
    cover: str | None = None
    thumbnail: str | None = None
    #: The feed this entry leads to (its books, for a series).
    feed: str | None = None
    #: An HTML page about the entry on the upstream, for the spec's ``url`` fields.
    page: str | None = None
    stream: Stream | None = None
    acquisitions: list[Acquisition] = field(default_factory=list)

    @property
    def is_book(self) -> bool:
        return self.stream is not None or bool(self.acquisitions)


@dataclass
class Feed:
    """One page of a catalogue."""

    url: str
    title: str = ""
    subtitle: str = ""
    updated: datetime | None = None
    icon: str | None = None
    entries: list[FeedEntry] = field(default_factory=list)
    next: str | None = None
    #: A search URL with ``{searchTerms}`` where the query goes, when the page offers one.
    search_template: str | None = None
    #: An OpenSearch description document to read the template from.
    search_description: str | None = None
    facets: list[Facet] = field(default_factory=list)
    #: Deviations from the standard that were read leniently, for the log.
    warnings: list[str] = field(default_factory=list)

    @property
    def books(self) -> list[FeedEntry]:
        return [entry for entry in self.entries if entry.is_book]
