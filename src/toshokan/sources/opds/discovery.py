"""What a catalogue offers, read from its root: shelves, the feed to browse, search, sorts.

Navigation entries of the root become shelves (declared as tags, offered as
presets that search with ``includeTag``); the shelf to browse when a search
names none is the operator's choice, else one that looks like a list of every
series, else the first. Facets of the browsed feed whose titles say how they
sort become declared sorts. The catalogue's own order is ``relevance``.
"""

import re
from dataclasses import dataclass, field
from urllib.parse import quote

from toshokan.sdk import (
    InvalidRequest,
    Publication,
    SearchRequest,
    SortOption,
    UpstreamError,
    slugify,
)
from toshokan.sources.opds.atom import plain_title
from toshokan.sources.opds.feed import Facet, Feed

#: Optional OpenSearch parameters (``{startPage?}``) left unfilled.
_OPTIONAL_PARAMETER = re.compile(r"\{[^}]*\?\}")
#: Words in a facet's title, and the sort they mean (first match wins).
SORT_WORDS: tuple[tuple[tuple[str, ...], SortOption], ...] = (
    (("title", "alphabet", "a-z", "name"), SortOption.TITLE),
    (("popular", "download", "most read"), SortOption.POPULARITY),
    (("rating", "rated", "stars"), SortOption.RATING),
    (("added", "created"), SortOption.CREATED_AT),
    (("updated", "modified"), SortOption.UPDATED_AT),
    (("new", "recent", "latest", "date"), SortOption.LATEST),
    (("year", "release", "published"), SortOption.YEAR),
)
#: Titles of root entries that list the whole catalogue, best first.
BROWSE_WORDS = (
    "all series",
    "series",
    "by title",
    "all",
    "library",
    "libraries",
    "newest",
    "latest",
)


@dataclass(frozen=True)
class Shelf:
    slug: str
    title: str
    href: str
    summary: str


@dataclass
class Offer:
    shelves: dict[str, Shelf] = field(default_factory=dict)
    browse: str | None = None
    search_template: str | None = None
    sorts: list[SortOption] = field(default_factory=lambda: [SortOption.RELEVANCE])
    #: Facets of the browsed feed that filter by genre or category, declared as tags.
    facet_tags: dict[str, Shelf] = field(default_factory=dict)
    #: Facets that filter by publication status, by the status they keep.
    statuses: dict[Publication, str] = field(default_factory=dict)

    def tags(self) -> dict[str, Shelf]:
        return self.shelves | self.facet_tags


#: Words in a facet group's title that make its facets genre or category filters.
GENRE_GROUPS = ("genre", "categor", "tag", "subject", "theme")
#: Words in a status facet's title, and the publication status they mean.
STATUS_WORDS: tuple[tuple[tuple[str, ...], Publication], ...] = (
    (("ongoing", "in progress", "publishing", "continuing"), Publication.ONGOING),
    (("complete", "finished", "ended"), Publication.COMPLETED),
    (("cancel", "dropped", "discontinued"), Publication.CANCELLED),
    (("hiatus", "paused"), Publication.HIATUS),
)


def filter_facets(feed: Feed, taken: set[str]) -> tuple[dict[str, Shelf], dict[Publication, str]]:
    """Facets of ``feed`` that filter it by genre (as tags not in ``taken``) or by status."""
    tags: dict[str, Shelf] = {}
    statuses: dict[Publication, str] = {}
    for facet in feed.facets:
        group, title = facet.group.lower(), facet.title.strip()
        if not title:
            continue
        if "status" in group:
            status = next(
                (p for keys, p in STATUS_WORDS if any(k in title.lower() for k in keys)), None
            )
            if status is not None:
                statuses.setdefault(status, facet.href)
        elif any(word in group for word in GENRE_GROUPS) and len(tags) < 200:
            base = slugify(title, fallback="tag", max_length=40)
            slug, n = base, 2
            while slug in tags or slug in taken:
                slug, n = f"{base}-{n}", n + 1
            tags[slug] = Shelf(slug=slug, title=title[:50], href=facet.href, summary="")
    return tags, statuses


def sort_of(facet: Facet) -> SortOption | None:
    words = facet.title.lower()
    if not words or (
        facet.group and "sort" not in facet.group.lower() and "order" not in facet.group.lower()
    ):
        return None
    return next((sort for keys, sort in SORT_WORDS if any(k in words for k in keys)), None)


def sort_facets(feed: Feed) -> dict[SortOption, str]:
    """The facet links of ``feed`` that sort it, by the sort they mean."""
    found: dict[SortOption, str] = {}
    for facet in feed.facets:
        sort = sort_of(facet)
        if sort is not None:
            found.setdefault(sort, facet.href)
    return found


def shelves_of(root: Feed) -> dict[str, Shelf]:
    shelves: dict[str, Shelf] = {}
    for entry in root.entries:
        if entry.is_book or entry.feed is None or len(shelves) >= 100:
            continue
        base = slugify(entry.title, fallback="shelf", max_length=40)
        slug, n = base, 2
        while slug in shelves:
            slug, n = f"{base}-{n}", n + 1
        shelves[slug] = Shelf(
            slug=slug, title=entry.title[:50], href=entry.feed, summary=entry.summary
        )
    return shelves


def browse_target(root: Feed, shelves: dict[str, Shelf], preferred: str) -> str:
    """The feed to browse: the root itself when it lists works, else a shelf."""
    if root.books or not shelves:
        return root.url
    return pick_shelf(shelves, preferred) or next(iter(shelves.values())).href


def pick_shelf(shelves: dict[str, Shelf], preferred: str = "") -> str | None:
    """The shelf the operator named, or the one whose title says it lists everything."""
    by_title = {plain_title(shelf.title).lower(): shelf for shelf in shelves.values()}
    if plain_title(preferred).lower() in by_title:
        return by_title[plain_title(preferred).lower()].href
    for word in BROWSE_WORDS:
        for title, shelf in by_title.items():
            if title == word or title.startswith(word + " ") or title.endswith(" " + word):
                return shelf.href
    return None


def search_feed(offer: Offer, request: SearchRequest) -> str:
    """The feed a search reads: the catalogue's search for a query, else the one shelf, tag or
    status it names, else the feed to browse (sorted afterwards by the feed's own facets)."""
    query = request.query.strip()
    if query:
        if offer.search_template is None:
            raise InvalidRequest("This catalogue offers no search; browse its shelves instead.")
        filled = offer.search_template.replace("{searchTerms}", quote(query, safe=""))
        return _OPTIONAL_PARAMETER.sub("", filled)
    tags, known = request.filters.includeTag or [], offer.tags()
    chosen = [known[slug].href for slug in tags if slug in known]
    for status in request.filters.status or []:
        href = next((h for p, h in offer.statuses.items() if p.lower() == status.lower()), None)
        if href is None:
            offered = ", ".join(offer.statuses) or "none"
            raise InvalidRequest(f"This catalogue filters by these statuses only: {offered}.")
        chosen.append(href)
    if len(chosen) > 1:
        raise InvalidRequest("This catalogue browses one shelf, tag or status at a time.")
    url = chosen[0] if chosen else offer.browse
    if url is None:
        raise UpstreamError("The catalogue's root could not be read.")
    return url
