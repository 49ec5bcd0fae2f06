"""The words the Alethia app knows, and the spec's words translated into them.

The app decodes enums strictly: one sort, filter or auth type it does not
know fails the whole host, so the dialect declares only these, and every
preset is translated into them or left out.
"""

from toshokan.models import AuthType, FilterKey, Preset, SearchConfig, SortOption

#: Sort values the app decodes.
SORTS: tuple[SortOption, ...] = (
    SortOption.TITLE,
    SortOption.YEAR,
    SortOption.CREATED_AT,
    SortOption.UPDATED_AT,
    SortOption.RELEVANCE,
    SortOption.POPULARITY,
    SortOption.RATING,
    SortOption.CHAPTERS,
    SortOption.FOLLOWS,
)

#: Filter keys the app decodes.
FILTERS: tuple[FilterKey, ...] = (
    FilterKey.YEAR,
    FilterKey.INCLUDE_TAG,
    FilterKey.EXCLUDE_TAG,
    FilterKey.STATUS,
    FilterKey.ORIGINAL_LANGUAGE,
    FilterKey.TRANSLATED_LANGUAGE,
    FilterKey.CONTENT_RATING,
    FilterKey.MIN_CHAPTERS,
)

#: A sort the app does not know, and the known one that orders the same way.
EQUIVALENT_SORTS: dict[SortOption, SortOption] = {SortOption.LATEST: SortOption.UPDATED_AT}

#: The app spells the auth types in camelCase.
AUTH_TYPES: dict[AuthType, str] = {
    AuthType.NONE: "none",
    AuthType.BASIC: "basic",
    AuthType.SESSION: "session",
    AuthType.API_KEY: "apiKey",
    AuthType.BEARER: "bearer",
    AuthType.COOKIE: "cookie",
}


def known_sorts(search: SearchConfig) -> list[SortOption]:
    """The source's sorts the app knows, in the source's order."""
    return [sort for sort in search.sort if sort in SORTS]


def known_filters(search: SearchConfig) -> list[FilterKey]:
    """The source's filters the app knows, in the source's order."""
    return [key for key in search.filters if key in FILTERS]


def translated_sort(sort: SortOption, search: SearchConfig) -> SortOption | None:
    """``sort`` in the app's words for this source, or None when the app cannot ask for it."""
    if sort in SORTS:
        return sort
    equivalent = EQUIVALENT_SORTS.get(sort)
    return equivalent if equivalent in search.sort else None


def translated_preset(preset: Preset, search: SearchConfig) -> Preset | None:
    """The preset as the app can run it, or None when it needs a sort or filter the app lacks.

    A translated preset still runs on the source: its sort is one the source
    declares, and its filters are untouched (leaving one out would widen the
    search the preset promises).
    """
    sort = translated_sort(preset.request.sort, search)
    if sort is None or any(key not in FILTERS for key in preset.request.filters.given()):
        return None
    request = preset.request.model_copy(update={"sort": sort})
    return preset.model_copy(update={"request": request})
