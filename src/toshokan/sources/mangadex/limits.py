"""MangaDex's published request rates, as the SDK's process-wide budgets.

MangaDex counts requests per IP address: about 5 per second for the API as
a whole and 40 per minute for ``/at-home/server``. The counting and waiting
are the SDK's (:class:`~toshokan.sdk.Throttle`, a strict moving window);
what is MangaDex's is which budgets exist, how they are named (one per
upstream address, so every MangaDex source of the process shares them) and
that a page list counts against both.
"""

from typing import NamedTuple

import httpx

from toshokan.sdk import Throttle
from toshokan.sources.mangadex.settings import Settings

#: Seconds the ``/at-home/server`` allowance covers.
AT_HOME_PERIOD = 60


class Budgets(NamedTuple):
    api: Throttle
    at_home: Throttle


def budgets(settings: Settings) -> Budgets:
    """The process's budgets for the MangaDex instance at ``settings.api_url``."""
    upstream = httpx.URL(settings.api_url).netloc.decode() or settings.api_url
    return Budgets(
        api=Throttle.per_second(f"{upstream} api", settings.requests_per_second),
        at_home=Throttle(f"{upstream} at-home", settings.at_home_per_minute, AT_HOME_PERIOD),
    )
