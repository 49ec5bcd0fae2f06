"""Cache-Control values per kind of answer, following the spec's caching guidance."""

from toshokan.config import CacheSection

NO_STORE = "no-store"


def cache_control(cache: CacheSection, kind: str, *, private: bool = False) -> str:
    """Shared caches may keep public answers; answers that depended on credentials are private."""
    seconds = {
        "configuration": cache.configuration,
        "search": cache.search,
        "manga": cache.manga,
        "chapters": cache.chapters,
    }.get(kind)
    if not seconds:
        return NO_STORE
    return f"{'private' if private else 'public'}, max-age={seconds}"
