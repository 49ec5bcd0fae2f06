"""Cache-Control values per kind of answer, following the spec's caching guidance."""

from starlette.requests import Request

from toshokan.config import CacheSection

NO_STORE = "no-store"
KINDS = ("configuration", "search", "manga", "chapters")


class CacheControl:
    """The header values, computed once from the configuration rather than on every answer.

    Shared caches may keep public answers; answers that depended on
    credentials are private.
    """

    def __init__(self, cache: CacheSection):
        seconds = {kind: getattr(cache, kind) for kind in KINDS}
        self.public = {k: f"public, max-age={s}" if s else NO_STORE for k, s in seconds.items()}
        self.private = {k: f"private, max-age={s}" if s else NO_STORE for k, s in seconds.items()}

    def of(self, kind: str, private: bool) -> str:
        return (self.private if private else self.public)[kind]


def cache_of(request: Request) -> CacheControl:
    """The application's header values, which every JSON face answers with."""
    cache_control: CacheControl = request.app.state.cache_control
    return cache_control
