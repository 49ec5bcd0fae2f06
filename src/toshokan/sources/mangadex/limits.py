"""MangaDex's published request rates, as the SDK's process-wide budgets.

MangaDex counts requests per IP address: about 5 per second for the API as
a whole and 40 per minute for ``/at-home/server``. The counting and waiting
are the SDK's (:class:`~toshokan.sdk.Throttle`, a strict moving window);
what is MangaDex's is which budgets exist, how they are named (one per
upstream address, so every MangaDex source of the process shares them),
that a page list counts against both, and how much of each background work
(checks, downloads) leaves to readers.
"""

from typing import NamedTuple

import httpx

from toshokan.sdk import Throttle
from toshokan.sources.mangadex.settings import Settings

#: Seconds the ``/at-home/server`` allowance covers.
AT_HOME_PERIOD = 60
#: The API budget's share kept for readers: a reader opening a chapter asks two API requests
#: in a row (the chapter, then its page list), so two of the five a second are theirs; with
#: one, the second waited for the next second behind background work holding the other four.
API_READERS_SHARE = 0.4
#: The page lists' share kept for readers: 8 of the 40 a minute (a chapter opened every 7.5 s),
#: the other 32 a minute bounding how fast kept chapters are downloaded.
AT_HOME_READERS_SHARE = 0.2


class Budgets(NamedTuple):
    api: Throttle
    at_home: Throttle


def budgets(settings: Settings) -> Budgets:
    """The process's budgets for the MangaDex instance at ``settings.api_url``."""
    upstream = httpx.URL(settings.api_url).netloc.decode() or settings.api_url
    return Budgets(
        api=Throttle.per_second(
            f"{upstream} api", settings.requests_per_second, readers_share=API_READERS_SHARE
        ),
        at_home=Throttle(
            f"{upstream} at-home",
            settings.at_home_per_minute,
            AT_HOME_PERIOD,
            readers_share=AT_HOME_READERS_SHARE,
        ),
    )
