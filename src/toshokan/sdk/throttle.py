"""Strict, process-wide request budgets for talking to upstreams.

Upstreams count requests per IP address over a window ("5 per second",
"40 per minute"), so an adapter must never send more than that in *any*
window, across every source and client of the process. A leaky bucket
(``aiolimiter``) lets a full bucket burst on top of the steady rate and so
sends up to twice the allowance in some windows; the ``limits`` library's
moving-window strategy counts exactly, and we use it rather than our own
bookkeeping. What is ours is only the waiting: :meth:`Throttle.acquire`
sleeps until ``limits`` reports the window's reset time, then checks again.

Every :class:`Throttle` of one ``name`` (an upstream's host plus a budget
name) draws on one counter in one process-wide memory storage. The storage
is process-wide rather than per event loop because the upstream counts the
process's IP address, not its loops. Tests, which each run on a fresh loop,
therefore call :func:`reset` to start from a full budget (``tests/conftest.py``).

A host of several processes or replicas counts every budget once for all of
them: at start-up it hands the throttle a :class:`SharedCounts` (the counters
of its Redis, ``[cluster] redis``), which :meth:`Throttle.acquire` uses while
it answers; when it does not, each process counts alone until it does again.
A pause an upstream asks of one process pauses that budget in every process.

An upstream that says "not before an hour" pauses its budget (:meth:`Throttle.pause`).
A paused budget is not waited for: :meth:`Throttle.acquire` raises :class:`BudgetPaused`
at once, and wakes the requests already queued for a slot so they raise too, because
nobody's deadline is as long as the pause and each of them would only time out.
"""

import asyncio
import contextlib
import logging
import math
import time
import weakref
from fractions import Fraction
from typing import Protocol

from limits import RateLimitItem, RateLimitItemPerSecond
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

log = logging.getLogger(__name__)

#: (count, whole seconds): at most ``count`` requests in any window of that many seconds.
Window = tuple[int, int]


class BudgetPaused(Exception):
    """The upstream asked for a pause of this budget; ``seconds`` of it are left."""

    def __init__(self, seconds: float):
        super().__init__(f"budget paused for {seconds:.0f} s")
        self.seconds = seconds


class UpstreamLimiter(Protocol):
    """What :class:`~toshokan.sdk.UpstreamClient` waits on before every attempt.

    ``acquire`` raises :class:`BudgetPaused` while a pause asked for by the upstream lasts.
    """

    async def acquire(self) -> None: ...

    def pause(self, seconds: float) -> None: ...

    def paused_for(self) -> float: ...


def windows_for_rate(rate: float) -> tuple[Window, ...]:
    """A rate per second as whole-second windows (``limits`` counts whole seconds).

    5/s is 5 per 1 s. A fractional rate keeps its exact average over the
    shortest whole-second window (2.5/s is 5 per 2 s) plus a 1-second cap of
    the rate rounded up (3), so those 5 cannot all go in one second; a
    whole number of requests cannot do better in every second without
    lowering the average.
    """
    if not rate > 0 or math.isinf(rate):
        raise ValueError(f"a request rate must be positive and finite, not {rate}")
    exact = Fraction(rate).limit_denominator(60)
    count, period = exact.numerator, exact.denominator
    cap = math.ceil(exact)
    if period > 1 and count > cap:
        return (count, period), (cap, 1)
    return ((count, period),)


class SharedCounts(Protocol):
    """Counters every process of the host shares, and whether they can be asked now."""

    @property
    def strategy(self) -> MovingWindowRateLimiter: ...

    @property
    def errors(self) -> tuple[type[BaseException], ...]:
        """What the shared storage raises when it does not answer."""

    def available(self) -> bool: ...

    def failed(self, error: BaseException) -> None:
        """A call failed with one of :attr:`errors`: count locally until the storage answers."""

    def pause(self, name: str, seconds: float) -> None:
        """Tell every process that budget ``name`` is paused for ``seconds`` (in the background)."""

    async def paused_for(self, name: str) -> float:
        """Seconds left of a pause of ``name`` that any process was asked for (0 when none)."""


class _State:
    """The process's counters, granted pauses and chosen windows, replaced by :func:`reset`."""

    def __init__(self) -> None:
        self.strategy = MovingWindowRateLimiter(storage_from_string("async+memory://"))
        self.shared: SharedCounts | None = None
        self.windows: dict[str, tuple[Window, ...]] = {}
        self.paused_until: dict[str, float] = {}
        # asyncio locks and events belong to one loop, so first-come-first-served turns, and
        # the events that wake a turn waiting for a slot when its budget is paused, are per loop.
        self.turns: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, asyncio.Lock]
        ] = weakref.WeakKeyDictionary()
        self.wakeups: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, asyncio.Event]
        ] = weakref.WeakKeyDictionary()


_state = _State()


def share(counts: SharedCounts | None) -> None:
    """Count every budget in ``counts`` (the host's shared storage), or in memory for None."""
    _state.shared = counts


def reset() -> None:
    """Forget every count, pause and window: a full budget for everyone (for tests and benches)."""
    global _state
    _state = _State()


class Throttle:
    """The process-wide budget ``name``: at most ``count`` requests in any ``period`` seconds.

    The first throttle of a name fixes its windows; a later one asking for
    different windows is told so in the log rather than silently given a
    second allowance.
    """

    def __init__(self, name: str, count: int, period: int = 1, *more: Window):
        wanted = ((count, period), *more)
        if any(c < 1 or p < 1 for c, p in wanted):
            raise ValueError(f"throttle windows must be positive whole numbers, not {wanted}")
        windows = _state.windows.setdefault(name, wanted)
        if windows != wanted:
            log.warning("rate limit for %s is already %s; ignoring %s", name, windows, wanted)
        self.name = name
        self.windows = windows
        self._items: tuple[RateLimitItem, ...] = tuple(
            RateLimitItemPerSecond(c, p, namespace="upstream") for c, p in windows
        )

    @classmethod
    def per_second(cls, name: str, rate: float) -> "Throttle":
        """The budget ``name`` for a (possibly fractional) rate per second."""
        first, *more = windows_for_rate(rate)
        return cls(name, *first, *more)

    def __repr__(self) -> str:
        return f"Throttle({self.name!r}, windows={self.windows})"

    async def acquire(self) -> None:
        """Wait for a free slot in every window, then take it; FIFO per loop.

        Raises :class:`BudgetPaused` instead of waiting while the budget is paused,
        including when the pause begins during the wait.
        """
        self._refuse_if_paused()
        loop = asyncio.get_running_loop()
        turns, wakeups = _state.turns.setdefault(loop, {}), _state.wakeups.setdefault(loop, {})
        async with turns.setdefault(self.name, asyncio.Lock()):
            while True:
                self._refuse_if_paused()
                shared = _state.shared
                if shared is not None and shared.available():
                    try:
                        if (left := await shared.paused_for(self.name)) > 0:
                            self._paused_here(left)  # another process was told to wait
                            raise BudgetPaused(left)
                        reset_at = await self._take(shared.strategy)
                    except shared.errors as error:
                        shared.failed(error)
                        continue
                else:
                    reset_at = await self._take(_state.strategy)
                if reset_at is None:
                    return
                paused = wakeups.setdefault(self.name, asyncio.Event())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(paused.wait(), max(0.001, reset_at - time.time()))

    async def _take(self, strategy: MovingWindowRateLimiter) -> float | None:
        """Take a slot in every window: None when taken, else when to look again (epoch)."""
        items = self._items
        # Nobody else of this loop takes a turn between test and hit; another process's hit in
        # between can only make a hit fail (each is atomic), and then we wait and check again.
        if all([await strategy.test(i, self.name) for i in items]) and all(
            [await strategy.hit(i, self.name) for i in items]
        ):
            return None
        stats = [await strategy.get_window_stats(i, self.name) for i in items]
        return max((s.reset_time for s in stats if s.remaining < 1), default=0.0)

    def pause(self, seconds: float) -> None:
        """The upstream asked us to wait: refuse every request of this budget until then,
        in every process of the host when the budgets are shared."""
        self._paused_here(seconds)
        if _state.shared is not None and _state.shared.available():
            _state.shared.pause(self.name, seconds)

    def _paused_here(self, seconds: float) -> None:
        until = time.monotonic() + seconds
        _state.paused_until[self.name] = max(_state.paused_until.get(self.name, 0.0), until)
        # Wake this loop's turn waiting for a slot (a pause comes from an answer on this loop).
        with contextlib.suppress(RuntimeError):
            waiting = _state.wakeups.get(asyncio.get_running_loop(), {}).pop(self.name, None)
            if waiting is not None:
                waiting.set()

    def paused_for(self) -> float:
        """Seconds left of a pause the upstream asked for (0 when none)."""
        return max(0.0, _state.paused_until.get(self.name, 0.0) - time.monotonic())

    def _refuse_if_paused(self) -> None:
        if (left := self.paused_for()) > 0:
            raise BudgetPaused(left)


class AllOf:
    """Several budgets for one request (a page list counts against at-home *and* the API).

    They are taken in order, one at a time, so waiting for a slow budget
    (put it first) never holds up requests that only need the others.
    """

    def __init__(self, *limiters: UpstreamLimiter):
        self.limiters = limiters

    async def acquire(self) -> None:
        for limiter in self.limiters:
            await limiter.acquire()

    def pause(self, seconds: float) -> None:
        for limiter in self.limiters:
            limiter.pause(seconds)

    def paused_for(self) -> float:
        return max((limiter.paused_for() for limiter in self.limiters), default=0.0)
