"""A title's whole chapter feed in as few, and as parallel, requests as MangaDex allows.

The feed is paginated at most 500 chapters a page. The first page says how
many chapters there are (``total``), so every other page's offset is known
at once and they are requested a few at a time (the SDK's bounded
:func:`~toshokan.sdk.gather`); the shared rate limiter, not this module,
decides how fast they actually go out. A 2,000-chapter title costs four
requests, three of them in parallel, and no page is asked for twice.

The number of requests is bounded by what *we* ask for, never by what the
upstream claims: pages are always ``page_size`` apart (an upstream that
answers a page of one item does not turn into 10,000 requests), and MangaDex
serves nothing beyond offset 10,000, so a feed costs at most
:data:`MAX_PAGES` requests. A title with more chapters in
the configured languages is cut there (and the log says so).
"""

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from toshokan.sdk import gather
from toshokan.sources.mangadex.api import FEED_PAGE_MAX, RESULT_WINDOW, window
from toshokan.sources.mangadex.payloads import ChapterItem, Feed

log = logging.getLogger(__name__)

#: One page of the feed: ``fetch_page(offset, limit)``.
FetchPage = Callable[[int, int], Coroutine[Any, Any, Feed]]
#: Most requests one feed costs: MangaDex's result window in pages of the largest size.
MAX_PAGES = -(-RESULT_WINDOW // FEED_PAGE_MAX)
#: Pages of one feed requested at once.
CONCURRENT_PAGES = 4


def remaining_offsets(total: int, page_size: int) -> list[tuple[int, int]]:
    """(offset, limit) of every page after the first, within MangaDex's result window."""
    reachable = min(total, RESULT_WINDOW)
    return [
        (offset, window(offset, page_size)) for offset in range(page_size, reachable, page_size)
    ]


async def fetch_feed(
    fetch_page: FetchPage,
    manga_id: str,
    *,
    page_size: int = FEED_PAGE_MAX,
    concurrent: bool = True,
) -> list[ChapterItem]:
    """Every chapter of the feed, each once, in MangaDex's (volume, chapter) order.

    ``concurrent=False`` fetches the same pages one after another; it exists
    as the benchmark's baseline.
    """
    first = await fetch_page(0, page_size)
    total = first["total"]
    if total > RESULT_WINDOW:
        log.warning(
            "manga %s has %d chapters; MangaDex serves only the first %d",
            manga_id,
            total,
            RESULT_WINDOW,
        )
    pages = [first]
    rest = remaining_offsets(total, page_size)
    if concurrent and rest:
        pages += await gather(*(fetch_page(o, n) for o, n in rest), limit=CONCURRENT_PAGES)
    else:
        for offset, limit in rest:
            pages.append(await fetch_page(offset, limit))
    seen: set[str] = set()
    chapters = []
    for page in pages:
        for item in page["data"]:
            # Pages are fetched at slightly different instants; a chapter uploaded in between
            # can shift one onto two pages. It is listed once.
            if item["id"] not in seen:
                seen.add(item["id"])
                chapters.append(item)
    return chapters
