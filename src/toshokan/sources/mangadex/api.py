"""Everything about speaking MangaDex's API: limits, parameter names, error bodies.

Pure functions from the spec's requests to MangaDex query parameters, kept
apart from the adapter so each translation is testable without a network.
Array parameters use MangaDex's ``name[]`` form, repeated once per value
(``includedTags[]=a&includedTags[]=b``); sorts are ``order[field]=asc|desc``.
"""

import re
from collections.abc import Sequence

import httpx

from toshokan.sdk import (
    FilterKey,
    InvalidRequest,
    SearchRequest,
    SortOption,
    UpstreamError,
    clean_text,
    default_error_detail,
    parse_json,
)
from toshokan.sources.mangadex.settings import Settings
from toshokan.sources.mangadex.tags import TagCatalogue

#: MangaDex refuses any collection request with ``offset + limit`` above this.
RESULT_WINDOW = 10_000
#: Largest ``limit`` for ``GET /manga`` (and ``/cover``, ``/author``).
MANGA_PAGE_MAX = 100
#: Largest ``limit`` for ``GET /manga/{id}/feed``.
FEED_PAGE_MAX = 500
#: Every content rating; a feed or a single title asked for by id should never be filtered by it.
ALL_RATINGS = ("safe", "suggestive", "erotica", "pornographic")

Params = list[tuple[str, str]]

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_LANGUAGE = re.compile(r"^[a-z]{2,3}(-[a-z]{2,4})?$")

#: The spec's sorts MangaDex can do, and its ``order[...]`` field for each.
SORT_FIELDS: dict[SortOption, str] = {
    SortOption.RELEVANCE: "relevance",
    SortOption.LATEST: "latestUploadedChapter",
    SortOption.TITLE: "title",
    SortOption.YEAR: "year",
    SortOption.CREATED_AT: "createdAt",
    SortOption.UPDATED_AT: "updatedAt",
    SortOption.POPULARITY: "followedCount",
    SortOption.FOLLOWS: "followedCount",
    SortOption.RATING: "rating",
}

#: The spec's filters MangaDex can apply.
FILTERS: tuple[FilterKey, ...] = (
    FilterKey.INCLUDE_TAG,
    FilterKey.EXCLUDE_TAG,
    FilterKey.STATUS,
    FilterKey.CONTENT_RATING,
    FilterKey.DEMOGRAPHIC,
    FilterKey.YEAR,
    FilterKey.ORIGINAL_LANGUAGE,
    FilterKey.TRANSLATED_LANGUAGE,
    FilterKey.AUTHOR,
    FilterKey.ARTIST,
)

STATUSES = ("ongoing", "completed", "hiatus", "cancelled")
#: Spec classifications (and MangaDex's own words) to MangaDex content ratings.
CONTENT_RATINGS = {
    "safe": "safe",
    "suggestive": "suggestive",
    "explicit": "erotica",
    "erotica": "erotica",
    "pornographic": "pornographic",
}
DEMOGRAPHICS = ("shounen", "shoujo", "josei", "seinen", "none")


def is_uuid(slug: str) -> bool:
    """MangaDex ids are lowercase UUIDs; any other slug cannot exist there."""
    return bool(_UUID.match(slug))


def error_detail(response: httpx.Response) -> str:
    """MangaDex's own words from its error body, for UPSTREAM_* messages.

    The body is ``{"result": "error", "errors": [{"id", "status", "title",
    "detail", "context"}]}``; anything else falls back to the SDK's default.
    """
    try:
        body = parse_json(response.content)
    except UpstreamError:
        return default_error_detail(response)
    errors = body.get("errors") if isinstance(body, dict) else None
    if not isinstance(errors, list) or not errors:
        return default_error_detail(response)
    parts = []
    for error in errors[:3]:
        if not isinstance(error, dict):
            continue
        title, detail = error.get("title"), error.get("detail")
        parts.append(": ".join(str(p) for p in (title, detail) if p) or str(error.get("status")))
    return clean_text("; ".join(parts)) or default_error_detail(response)


def window(offset: int, limit: int) -> int:
    """The ``limit`` to ask for at ``offset`` without crossing the result window (0: nothing)."""
    return max(0, min(limit, RESULT_WINDOW - offset))


def has_more(offset: int, limit: int, total: int) -> bool:
    """Whether the next page (``offset + limit``) would hold a result MangaDex will serve."""
    return offset + limit < min(total, RESULT_WINDOW)


def _choices(key: str, values: Sequence[str], allowed: dict[str, str]) -> list[str]:
    chosen = []
    for value in values:
        mapped = allowed.get(value.strip().lower())
        if mapped is None:
            options = ", ".join(sorted(allowed))
            raise InvalidRequest(f"Filter {key!r} does not accept {value!r} (allowed: {options}).")
        if mapped not in chosen:
            chosen.append(mapped)
    return chosen


def _languages(key: str, values: Sequence[str]) -> list[str]:
    codes = []
    for value in values:
        code = value.strip().lower()
        if not _LANGUAGE.match(code):
            raise InvalidRequest(
                f"Filter {key!r}: {value!r} is not a language code such as 'en' or 'pt-br'."
            )
        if code not in codes:
            codes.append(code)
    return codes


def search_params(
    request: SearchRequest,
    *,
    limit: int,
    settings: Settings,
    tags: TagCatalogue,
    author_ids: Sequence[str] = (),
    artist_ids: Sequence[str] = (),
) -> Params:
    """``GET /manga`` parameters for a validated search (author names already resolved to ids)."""
    filters = request.filters
    params: Params = [("limit", str(limit)), ("offset", str(request.offset))]
    query = request.query.strip()
    if query:
        params.append(("title", query))
    field = SORT_FIELDS.get(request.sort)
    if field is None:
        raise InvalidRequest(f"MangaDex cannot sort by {request.sort.value!r}.")
    if field == "relevance" and not query:
        # Relevance ranks matches of a title query; browsing everything, popularity is the useful order.
        field = "followedCount"
    params.append((f"order[{field}]", request.direction))
    # The people too: a result then describes its title without a request of its own.
    params += [("includes[]", "author"), ("includes[]", "artist"), ("includes[]", "cover_art")]

    for key, name, slugs in (
        ("includeTag", "includedTags[]", filters.includeTag),
        ("excludeTag", "excludedTags[]", filters.excludeTag),
    ):
        for slug in slugs or ():
            tag = tags.by_slug(slug)
            if tag is None:
                raise InvalidRequest(f"Filter {key!r}: MangaDex has no tag {slug!r}.")
            params.append((name, tag.id))
    if filters.includeTag:
        params.append(("includedTagsMode", "AND"))
    if filters.excludeTag:
        params.append(("excludedTagsMode", "OR"))

    if filters.status:
        params += [
            ("status[]", s) for s in _choices("status", filters.status, {s: s for s in STATUSES})
        ]
    ratings = (
        _choices("contentRating", filters.contentRating, CONTENT_RATINGS)
        if filters.contentRating
        else list(settings.content_ratings)
    )
    params += [("contentRating[]", r) for r in ratings]
    if filters.demographic:
        demographics = _choices("demographic", filters.demographic, {d: d for d in DEMOGRAPHICS})
        params += [("publicationDemographic[]", d) for d in demographics]
    if filters.year is not None:
        params.append(("year", str(filters.year)))
    if filters.originalLanguage:
        params += [
            ("originalLanguage[]", c)
            for c in _languages("originalLanguage", filters.originalLanguage)
        ]
    translated = (
        _languages("translatedLanguage", filters.translatedLanguage)
        if filters.translatedLanguage
        else (settings.languages if settings.search_available_languages_only else [])
    )
    params += [("availableTranslatedLanguage[]", c) for c in translated]
    params += [("authors[]", i) for i in author_ids]
    params += [("artists[]", i) for i in artist_ids]
    return params


def manga_params() -> Params:
    """``GET /manga/{id}``: everything a details page shows in one request."""
    return [("includes[]", "author"), ("includes[]", "artist"), ("includes[]", "cover_art")]


def marks_params(manga_ids: Sequence[str]) -> Params:
    """``GET /manga``: up to :data:`MANGA_PAGE_MAX` titles by id (MangaDex's own limit for
    ``ids[]``), whatever their rating (they were chosen by id), for their
    ``latestUploadedChapter``; no relationship expanded."""
    params: Params = [("ids[]", manga_id) for manga_id in manga_ids]
    params += [("limit", str(MANGA_PAGE_MAX))]
    params += [("contentRating[]", r) for r in ALL_RATINGS]
    return params


def covers_params(manga_id: str) -> Params:
    """``GET /cover``: every cover of one title, by volume."""
    return [
        ("manga[]", manga_id),
        ("limit", str(MANGA_PAGE_MAX)),
        ("order[volume]", "asc"),
    ]


def author_params(name: str) -> Params:
    """``GET /author``: authors (and artists, the same entity) matching a name."""
    return [("name", name), ("limit", "10")]


def feed_params(settings: Settings, offset: int, limit: int = FEED_PAGE_MAX) -> Params:
    """``GET /manga/{id}/feed`` for one page of chapters in the source's languages.

    The order is fixed (and fully deterministic on MangaDex's side) so pages
    fetched concurrently tile the list without overlap. Every content rating
    is asked for: the title was chosen by id, so its rating was already
    accepted, and MangaDex would otherwise silently drop pornographic titles'
    chapters. Future (not yet readable) chapters are left out.
    """
    order = [("order[volume]", "desc"), ("order[chapter]", "desc")]
    return _feed(settings, offset, limit, order)


def newest_feed_params(settings: Settings) -> Params:
    """``GET /manga/{id}/feed``: the newest page of chapters in the source's languages, most
    recently readable first (a check of a followed series: what is new is on it)."""
    order = [("order[readableAt]", "desc"), ("order[chapter]", "desc")]
    return _feed(settings, 0, FEED_PAGE_MAX, order)


def _feed(settings: Settings, offset: int, limit: int, order: Params) -> Params:
    params: Params = [("limit", str(limit)), ("offset", str(offset))]
    params += [("translatedLanguage[]", code) for code in settings.languages]
    params += [("contentRating[]", r) for r in ALL_RATINGS]
    params += [("includes[]", "scanlation_group")]
    params += order
    params += [("includeFuturePublishAt", "0")]
    params += [("includeExternalUrl", "1" if settings.external_chapters == "mark" else "0")]
    return params
