"""One deadline per client request, shared by every upstream call made for it.

The host enters :func:`upstream_deadline` around each call into an adapter
(search, manga, chapters, pages, authenticate). The deadline lives in a
context variable, so every task the adapter starts (a gathered feed page, a
cover list fetched beside the details) inherits it, and the upstream client
reads :func:`remaining` to size each attempt, to decide whether a retry or an
upstream's retry hint still fits, and to bound a wait for a rate budget. The
block itself is cancelled when the deadline passes, whatever the adapter was
doing, and the client gets ``UPSTREAM_TIMEOUT``: no combination of attempts,
retries, waits and slow bodies outlives it.

When the upstream did answer, only badly (a truncated body, a 503), and a
retry of it is what runs out of time, the client is told the upstream's
failure (:func:`note_failure`), not a timeout: that is what went wrong, on a
loaded machine as on an idle one.

Deadlines nest by taking the earlier one: an adapter may shorten its own
budget for a sub-call but never extend the host's.
"""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar

from toshokan.errors import HostError, UpstreamTimeout

#: The running loop's clock time at which the current request's upstream work must end.
_deadline: ContextVar[float | None] = ContextVar("toshokan_upstream_deadline", default=None)
#: The upstream's own failures seen under the current deadline (shared with the tasks it starts).
_failures: ContextVar[list[HostError] | None] = ContextVar(
    "toshokan_upstream_failures", default=None
)


def remaining() -> float | None:
    """Seconds left before the current deadline (never negative), or None outside one."""
    deadline = _deadline.get()
    if deadline is None:
        return None
    return max(0.0, deadline - asyncio.get_running_loop().time())


def note_failure(error: HostError) -> None:
    """Remember that the upstream answered with ``error`` before a retry under this deadline."""
    failures = _failures.get()
    if failures is not None:
        failures.append(error)


def within(seconds: float) -> float:
    """``seconds`` shortened to what is left of the deadline, if there is one."""
    left = remaining()
    return seconds if left is None else min(seconds, left)


@asynccontextmanager
async def upstream_deadline(seconds: float, *, since: float | None = None) -> AsyncIterator[None]:
    """Run the block within ``seconds`` (or the enclosing deadline, if sooner).

    ``since`` (the running loop's clock time) is when those seconds started, if
    before now: one client request's several blocks share one budget. When time
    runs out the block is cancelled and ``UPSTREAM_TIMEOUT`` raised.
    """
    loop = asyncio.get_running_loop()
    deadline = (loop.time() if since is None else since) + seconds
    outer = _deadline.get()
    if outer is not None:
        deadline = min(deadline, outer)
    # One list per client request: a nested deadline (the core's around a coalesced
    # computation, which runs in a task of its own) notes where the outer one looks.
    failures = _failures.get()
    if failures is None:
        failures = []
    token, noted = _deadline.set(deadline), _failures.set(failures)
    try:
        async with asyncio.timeout_at(deadline) as timer:
            yield
    except TimeoutError:
        if timer.expired():
            if failures:
                raise failures[-1] from None
            raise UpstreamTimeout(
                f"The upstream did not answer within the {seconds:g} s this host allows."
            ) from None
        raise
    finally:
        _failures.reset(noted)
        _deadline.reset(token)
