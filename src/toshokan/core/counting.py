"""How many results a search has in all, when its answers tell only a page and whether more follow.

The spec's search answers a page of results and ``more``; nothing counts them
all. A face that shows a count (OPDS ``totalResults``, Komga ``totalElements``)
finds it by asking for pages: the count is known on the last page, so the last
page is found by doubling the page number until past the end, then halving the
gap. That costs a few searches (about twice the logarithm of the number of
pages), cheap where a source's search reads its own index (a library whose
files are here), so faces ask it only of such sources; a remote source would
spend as many upstream requests, and its count is left unknown.
"""

from collections.abc import Awaitable, Callable

#: A page of the search (from 1): how many results it holds, and whether more follow.
PageAsked = Callable[[int], Awaitable[tuple[int, bool]]]


async def count_results(
    ask: PageAsked, size: int, *, after: int = 0, before: int | None = None, last: int = 10_000
) -> int:
    """How many results pages of ``size`` hold in all.

    ``after`` is a page known to be followed by more (0: none known); ``before``
    a page known to be empty, past the end (None: none known); no page after
    ``last`` is asked for.
    """
    low, high = after, before
    while high is None or high - low > 1:
        probe = min(low * 2 or 1, last) if high is None else (low + high) // 2
        if probe <= low:  # the last page allowed holds more still: count up to it
            return low * size
        held, more = await ask(probe)
        if held and not more:
            return (probe - 1) * size + held
        if held:
            low = probe
        else:
            high = probe
    return low * size
