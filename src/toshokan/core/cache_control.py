"""Cache-Control values per kind of answer, following the spec's caching guidance."""

from starlette.requests import Request

from toshokan.config import CacheSection

#: Answers no one may keep: refusals, page lists, positions, probes.
NO_STORE = "no-store"
#: The header, for answers built with a dict of headers.
NO_STORE_HEADERS = {"Cache-Control": NO_STORE}
#: Answers that show one reader's own state (progress, follows): never in a shared cache, and
#: asked again each time.
PRIVATE_NO_CACHE = "private, no-cache"
#: Kept, but asked again each time: the web reader's shell, which names the current assets.
REVALIDATE = "no-cache"
#: Catalogue feeds change as sources do: a minute in shared caches.
PUBLIC_FEED = "public, max-age=60"
#: Seconds a reader keeps a page image or a cover.
IMAGE_SECONDS = 3600
#: Static files whose names change with their content.
IMMUTABLE = "public, max-age=31536000, immutable"
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


def image_cache_control(private: bool) -> str:
    """A page image's or a cover's: an hour, in the reader's cache alone when it needed
    credentials."""
    return f"{'private' if private else 'public'}, max-age={IMAGE_SECONDS}"


def cache_control_of(request: Request, kind: str, private: bool) -> str:
    """The value for an answer of ``kind`` (``configuration``, ``search``, ``manga``,
    ``chapters``), private when it depended on the caller's credentials."""
    cache_control: CacheControl = request.app.state.cache_control
    return cache_control.of(kind, private)
