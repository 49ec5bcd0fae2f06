"""What a reader follows, in Komga's own words: a collection, and Komga's "what is new" listings.

Komga's apps have no notion of following; they have collections and a home
page of what is new in the user's library. A reader's library, on this host,
is what they follow (the core checks those series and finds their new
chapters), so:

- the series they follow are the collection *Following* (:data:`FOLLOWING`),
  which Mihon's collection filter, Aidoku and Komelia list;
- ``series/new`` lists them as Komga lists newly added series: the latest
  followed first (``created`` is when the reader followed it);
- ``series/updated`` lists those a check found new chapters of since, the
  latest found first (``lastModified`` is when), as Komga lists series updated
  but not newly added;
- ``books/latest`` lists the new chapters the checks found, the latest found
  first, as Komga lists the books it added last;
- ``books/ondeck`` looks at the followed series with unread new chapters too
  (:mod:`toshokan.faces.komga.on_deck`), and the read list *New chapters*
  (:mod:`toshokan.faces.komga.read_lists`) holds the unread ones.

A reader who follows nothing gets Komga's listings of the sources as before
(each source's newest), so a host without follows keeps its home page.
"""

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime

from toshokan.core import Visit
from toshokan.core.follows import Follow
from toshokan.core.progress import ChapterRef, Position
from toshokan.errors import HostError
from toshokan.faces.komga import content
from toshokan.faces.komga.content import Reading
from toshokan.faces.komga.dto import BookDto, CollectionDto, PageWrapper, SeriesDto, page_of
from toshokan.faces.komga.dto_of import series_of_manga
from toshokan.faces.komga.ids import library_id, series_id
from toshokan.faces.komga.listing import SeriesQuery
from toshokan.faces.komga.read_lists import books_of_places
from toshokan.models import Manga

#: The id of the collection of the series a reader follows: a word, not a preset's id.
FOLLOWING = "following"


@dataclass(frozen=True)
class Followed:
    """One of the reader's follows, in a library the reader opens."""

    visit: Visit
    follow: Follow

    @property
    def manga(self) -> str:
        return self.follow.followed.series.manga

    @property
    def since(self) -> datetime:
        return _moment(self.follow.followed.since)

    @property
    def changed(self) -> datetime:
        found = self.follow.last_found
        return self.since if found is None else _moment(found)


def _moment(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


async def followed(reading: Reading, query: SeriesQuery | None = None) -> list[Followed]:
    """The reader's follows in the libraries they open (of those ``query`` names, if any),
    in the order the core keeps them (by title)."""
    visits = {visit.slug: visit for visit in await content.opened_visits(reading)}
    wanted = query.libraries if query is not None else frozenset()
    return [
        Followed(visits[source], follow)
        for follow in await content.follows(reading)
        if (source := follow.followed.series.source) in visits
        and (not wanted or library_id(source) in wanted)
    ]


def collection(found: list[Followed]) -> CollectionDto:
    """The collection *Following*: every followed series, by title."""
    changed = max((one.changed for one in found), default=_moment(0))
    return CollectionDto(
        id=FOLLOWING,
        name="Following",
        ordered=False,
        seriesIds=[series_id(one.visit.slug, one.manga) for one in found],
        createdDate=min((one.since for one in found), default=_moment(0)),
        lastModifiedDate=changed,
    )


async def series_page(
    reading: Reading, found: list[Followed], page: int, size: int, statuses: frozenset[str]
) -> PageWrapper[SeriesDto]:
    """Page ``page`` of ``found`` as Komga's series (read-status filtered on the page shown)."""
    shown = found[page * size : (page + 1) * size]
    series = await asyncio.gather(*(_series(reading, one) for one in shown))
    kept = [dto for dto in series if not statuses or _status(dto) in statuses]
    last = (page + 1) * size >= len(found)
    return page_of(kept, page, size, last=last, total=None if statuses else len(found))


def _status(dto: SeriesDto) -> str:
    if dto.booksReadCount == 0 and dto.booksInProgressCount == 0:
        return "UNREAD"
    return "READ" if dto.booksReadCount == dto.booksCount else "IN_PROGRESS"


async def _series(reading: Reading, one: Followed) -> SeriesDto:
    """A followed series as Komga's: the source's details and chapters when it answers, what
    the checks recorded (its title) when it does not (a series gone upstream stays listed).
    ``created`` is when the reader followed it, ``lastModified`` when a chapter new to them
    was last found."""
    stored = one.follow.followed.series
    try:
        work = await content.manga(reading, one.visit, one.manga)
        (progress,) = await content.progress_of(reading, one.visit, [one.manga])
    except HostError as refused:
        if refused.status == 500:
            raise
        work, progress = Manga(slug=one.manga, url="", title=stored.title), None
    chapters, places = (progress.chapters, progress.places) if progress else ([], {})
    dto = series_of_manga(one.visit.slug, work, one.visit.config, chapters, places)
    return dto.model_copy(update={"created": one.since, "lastModified": one.changed})


def newly_followed(found: list[Followed]) -> list[Followed]:
    """``series/new``: the latest followed first."""
    return sorted(found, key=lambda one: one.follow.followed.since, reverse=True)


def updated(found: list[Followed]) -> list[Followed]:
    """``series/updated``: those with chapters found new since they were followed, the latest
    found first."""
    with_news = [one for one in found if one.follow.last_found is not None]
    return sorted(with_news, key=lambda one: one.follow.last_found or 0.0, reverse=True)


async def latest_books(
    reading: Reading, found: list[Followed], page: int, size: int
) -> PageWrapper[BookDto]:
    """``books/latest``: the chapters the checks found new to the reader, the latest found
    first, with the reader's place in each."""
    visits = {one.visit.slug: one.visit for one in found}
    updates, after = await asyncio.gather(
        content.updates(reading, size, page * size),
        content.updates(reading, 1, (page + 1) * size),
    )
    shown = [u for u in updates if u.source in visits]
    works = list(dict.fromkeys((u.source, u.manga) for u in shown))
    positions = await asyncio.gather(*(content.positions(reading, s, m) for s, m in works))
    places = dict(zip(works, positions, strict=True))
    listed: list[tuple[ChapterRef, Position | None]] = [
        (ChapterRef(u.source, u.manga, u.chapter), places[u.source, u.manga].get(u.chapter))
        for u in shown
    ]
    books = await books_of_places(reading, visits, listed)
    return page_of(books, page, size, last=not after)
