"""The values a source's text filters can match, for faces that offer them as lists to pick from.

Komga's clients load a server's publishers and authors for their filter
sheets; the spec's configuration declares tags only. A source that knows
every value without asking an upstream (a library's index) lists them; any
other lists none, and its filters still take whatever text is typed.
Callers ask only of sources the request opened: these are the source's
content, behind its credentials like the rest.
"""

from toshokan.core.service import Core
from toshokan.models import FilterKey


async def filter_values(core: Core, slug: str, key: FilterKey) -> list[str]:
    """What ``key``'s filter can match in the source, by name; [] when it does not know."""
    hosted = core.source(slug)
    async with core.upstream_deadline():
        return await hosted.source.filter_values(key)
