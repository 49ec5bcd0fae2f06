"""A title's whole chapter feed in as few, and as parallel, requests as MangaDex allows.

The feed is paginated at most 500 chapters a page. The first page says how
many chapters there are (``total``), so every other page's offset is known
at once and they are requested concurrently; the shared rate limiter, not
this module, decides how fast they actually go out. A 2,000-chapter title
costs four requests, three of them in parallel, and no page is asked for
twice. MangaDex serves nothing beyond offset 10,000; a title with more
chapters in the configured languages is cut there (and the log says so).
"""

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from toshokan.errors import MangaNotFound, UpstreamError
from toshokan.sources.mangadex.api import FEED_PAGE_MAX, RESULT_WINDOW, feed_params, window
from toshokan.sources.mangadex.concurrency import gather
from toshokan.sources.mangadex.settings import Settings

log = logging.getLogger(__name__)
Json = Mapping[str, Any]


#: How the feed reaches MangaDex: ``get(path, params=..., not_found=...)`` returning parsed JSON.
GetJson = Callable[..., Awaitable[Any]]


async def _page(get: GetJson, manga_id: str, settings: Settings, offset: int, limit: int) -> Json:
    payload = await get(
        f"/manga/{manga_id}/feed",
        params=feed_params(settings, offset, limit),
        not_found=MangaNotFound,
    )
    if not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
        raise UpstreamError("MangaDex sent a chapter feed without a data list.")
    return payload


def remaining_offsets(total: int, page_size: int) -> list[tuple[int, int]]:
    """(offset, limit) of every page after the first, within MangaDex's result window."""
    reachable = min(total, RESULT_WINDOW)
    return [
        (offset, window(offset, page_size)) for offset in range(page_size, reachable, page_size)
    ]


async def fetch_feed(
    get: GetJson,
    manga_id: str,
    settings: Settings,
    *,
    page_size: int = FEED_PAGE_MAX,
    concurrent: bool = True,
) -> list[Json]:
    """Every chapter of the feed, each once, in MangaDex's (volume, chapter) order.

    ``concurrent=False`` fetches the same pages one after another; it exists
    as the benchmark's baseline.
    """
    first = await _page(get, manga_id, settings, 0, page_size)
    total = int(first.get("total") or 0)
    step = int(first.get("limit") or page_size) or page_size
    if total > RESULT_WINDOW:
        log.warning(
            "manga %s has %d chapters; MangaDex serves only the first %d",
            manga_id,
            total,
            RESULT_WINDOW,
        )
    pages = [first]
    rest = remaining_offsets(total, step)
    if concurrent and rest:
        pages += await gather(*(_page(get, manga_id, settings, o, n) for o, n in rest))
    else:
        for offset, limit in rest:
            pages.append(await _page(get, manga_id, settings, offset, limit))
    seen: set[str] = set()
    chapters = []
    for page in pages:
        for item in page["data"]:
            # Pages are fetched at slightly different instants; a chapter uploaded in between
            # can shift one onto two pages. It is listed once.
            if item.get("id") not in seen:
                seen.add(item.get("id"))
                chapters.append(item)
    return chapters
