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

Background work (checks, kept copies: nobody waits on them) waits for its turn at
an upstream budget behind readers and behind the budget's window; that wait is not
the upstream being slow, so the throttle moves the deadline later by as long
(:func:`postpone`) and the deadline measures the upstream's answers alone.
"""

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar

from toshokan.errors import HostError, UpstreamTimeout


class _Deadline:
    """One block's deadline (the running loop's clock time), its timer once running, and the
    deadline of the block it is nested in."""

    def __init__(self, at: float, outer: "_Deadline | None", moved: Callable[[float], None] | None):
        self.at = at
        self.outer = outer
        self.moved = moved
        self.timer: asyncio.Timeout | None = None


#: When the current request's upstream work must end (shared with the tasks it starts).
_deadline: ContextVar[_Deadline | None] = ContextVar("toshokan_upstream_deadline", default=None)
#: The upstream's own failures seen under the current deadline (shared with the tasks it starts).
_failures: ContextVar[list[HostError] | None] = ContextVar(
    "toshokan_upstream_failures", default=None
)


def remaining() -> float | None:
    """Seconds left before the current deadline (never negative), or None outside one."""
    deadline = _deadline.get()
    if deadline is None:
        return None
    return max(0.0, deadline.at - asyncio.get_running_loop().time())


def postpone(seconds: float) -> None:
    """Move the current deadline, and every one it is nested in, ``seconds`` later (for a wait
    that is nobody's: see the module's docstring). Nothing outside a deadline."""
    deadline = _deadline.get()
    told: list[Callable[[float], None]] = []  # a request's blocks nested in each other: once
    while deadline is not None:
        deadline.at += seconds
        if deadline.timer is not None and not deadline.timer.expired():
            deadline.timer.reschedule(deadline.at)
        if deadline.moved is not None and deadline.moved not in told:
            told.append(deadline.moved)
            deadline.moved(seconds)
        deadline = deadline.outer


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
async def upstream_deadline(
    seconds: float, *, since: float | None = None, moved: Callable[[float], None] | None = None
) -> AsyncIterator[None]:
    """Run the block within ``seconds`` (or the enclosing deadline, if sooner).

    ``since`` (the running loop's clock time) is when those seconds started, if
    before now: one client request's several blocks share one budget. When time
    runs out the block is cancelled and ``UPSTREAM_TIMEOUT`` raised. ``moved`` is
    told how far the block's deadline is postponed (:func:`postpone`), so that the
    request's next block starts from the moved time too.
    """
    loop = asyncio.get_running_loop()
    outer = _deadline.get()
    at = (loop.time() if since is None else since) + seconds
    deadline = _Deadline(at if outer is None else min(at, outer.at), outer, moved)
    # One list per client request: a nested deadline (the core's around a coalesced
    # computation, which runs in a task of its own) notes where the outer one looks.
    failures = _failures.get()
    if failures is None:
        failures = []
    token, noted = _deadline.set(deadline), _failures.set(failures)
    try:
        async with asyncio.timeout_at(deadline.at) as timer:
            deadline.timer = timer
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
