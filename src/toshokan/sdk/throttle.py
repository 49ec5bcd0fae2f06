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
name) draws on one counter in one memory storage of the process's event loop.
The host does all its upstream work on one loop; a loop run after another in
one process (a command run after another, as the tests run them) counts
afresh, as the next command's process would: ``limits``' memory storage binds
its locks to the loop that first waited on them, and one used by a later loop
fails there. Tests call :func:`reset` to start from a full budget
(``tests/conftest.py``).

A host of several processes or replicas counts every budget once for all of
them: at start-up it hands the throttle a :class:`SharedCounts` (the counters
of its Redis, ``[cluster] redis``), which :meth:`Throttle.acquire` uses while
it answers; when it does not, each process counts alone until it does again.
A pause an upstream asks of one process pauses that budget in every process.

Readers come before background work. Upstream work the host does for nobody waiting
(checks of followed series, downloads of kept chapters) runs inside :func:`background`,
and its requests then wait behind every reader's request queued for the same budget in
the process, and never take the readers' share of any window: that share of it, at least
one slot (:func:`reserved`), stays the readers' in every process of the host, which is
what keeps the rule whole across replicas sharing :class:`SharedCounts`, where nobody
knows who waits elsewhere. The share is the budget's own, set where it is declared
(``readers_share``, a fifth unless said): a budget of which one reader's action spends
several requests in a row (MangaDex's API: a chapter, then its page list) leaves readers
that many, or the last of them waits for the next window behind background work that
took the rest. Background work is counted twice, in the window and in a window of its
own of what the readers' share leaves, so readers using their share do not shrink
background work's either: a queue of downloads runs at its share's full rate beside a
reader (readers asking for more than their share share the rest first come).
Background work's wait for its turn moves its deadline later (it is nobody's wait):
see :func:`toshokan.sdk.deadline.postpone`.

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
from collections.abc import Awaitable, Coroutine, Iterator
from contextvars import ContextVar
from fractions import Fraction
from typing import Protocol

from limits import RateLimitItem, RateLimitItemPerSecond
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

from toshokan.sdk import deadline

log = logging.getLogger(__name__)

#: (count, whole seconds): at most ``count`` requests in any window of that many seconds.
Window = tuple[int, int]


#: The share of every window background work leaves to readers unless the budget says
#: otherwise (at least one slot of a window of two or more).
READERS_SHARE = 0.2

_background: ContextVar[bool] = ContextVar("toshokan_background", default=False)


@contextlib.contextmanager
def background() -> Iterator[None]:
    """Mark the upstream work done inside as background: nobody waits for it.

    Every budget's queued readers go first, and a share of each window
    (:func:`reserved`) is left to them. Tasks started inside inherit the mark.
    """
    token = _background.set(True)
    try:
        yield
    finally:
        _background.reset(token)


def in_background() -> bool:
    """Whether the running code is background work (inside :func:`background`)."""
    return _background.get()


#: Seconds background work's deadline is moved later, at most, while one request of it waits
#: for its turn at a budget (behind readers, for the window): longer than any window, bounded
#: so that work starved by readers for that long fails, as a request past its deadline does.
BACKGROUND_PATIENCE = 120.0
#: Seconds background work sleeps between two looks while readers are queued for the budget.
READERS_TURN = 1.0


def reserved(count: int, share: float = READERS_SHARE) -> int:
    """Slots of a window of ``count`` that background work never takes, for readers'
    ``share`` of it: at least one of two or more, never all of them."""
    return max(1, int(count * share)) if count > 1 else 0


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
    """The process's counters, granted pauses and chosen budgets, replaced by :func:`reset`."""

    def __init__(self) -> None:
        self.strategies: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, MovingWindowRateLimiter
        ] = weakref.WeakKeyDictionary()
        self.shared: SharedCounts | None = None
        #: Each budget's windows and readers' share, as its first throttle fixed them.
        self.budgets: dict[str, tuple[tuple[Window, ...], float]] = {}
        self.paused_until: dict[str, float] = {}
        # asyncio locks and events belong to one loop, so the queues are per loop.
        self.lines: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Line]] = (
            weakref.WeakKeyDictionary()
        )


class _Line:
    """One budget's queue in one event loop: readers take turns among themselves, first come
    first served, and so does background work, which waits while any reader is queued."""

    def __init__(self) -> None:
        self.readers = asyncio.Lock()
        self.background = asyncio.Lock()
        #: Readers queued or taking a slot now.
        self.readers_waiting = 0
        self._wake = asyncio.Event()

    def woken(self) -> Coroutine[object, object, bool]:
        """Done at the next :meth:`wake` (the event is the one of now, not of when awaited)."""
        return self._wake.wait()

    def wake(self) -> None:
        """Wake every turn sleeping here (a pause began, the last queued reader left)."""
        self._wake.set()
        self._wake = asyncio.Event()


def _line(name: str) -> _Line:
    lines = _state.lines.setdefault(asyncio.get_running_loop(), {})
    return lines.setdefault(name, _Line())


def _counts() -> MovingWindowRateLimiter:
    """The running loop's counters (in memory)."""
    loop = asyncio.get_running_loop()
    counts = _state.strategies.get(loop)
    if counts is None:
        counts = MovingWindowRateLimiter(storage_from_string("async+memory://"))
        _state.strategies[loop] = counts
    return counts


_state = _State()


def share(counts: SharedCounts | None) -> None:
    """Count every budget in ``counts`` (the host's shared storage), or in memory for None."""
    _state.shared = counts


def reset() -> None:
    """Forget every count, pause and budget: a full budget for everyone (for tests and benches)."""
    global _state
    _state = _State()


class Throttle:
    """The process-wide budget ``name``: at most ``count`` requests in any ``period`` seconds
    (and as many as each of ``more`` says in its window).

    ``readers_share`` (above 0, below 1) is the part of every window that background work
    leaves to readers (:func:`reserved`): at least as many slots as one reader's action
    spends of the budget in a row. The first throttle of a name fixes its windows and share;
    a later one asking for others is told so in the log rather than silently given a second
    allowance.
    """

    def __init__(
        self,
        name: str,
        count: int,
        period: int = 1,
        *more: Window,
        readers_share: float = READERS_SHARE,
    ):
        wanted = ((count, period), *more)
        if any(c < 1 or p < 1 for c, p in wanted):
            raise ValueError(f"throttle windows must be positive whole numbers, not {wanted}")
        if not 0 < readers_share < 1:
            raise ValueError(f"a readers' share is above 0 and below 1, not {readers_share}")
        windows, share = _state.budgets.setdefault(name, (wanted, readers_share))
        if (windows, share) != (wanted, readers_share):
            log.warning(
                "rate limit for %s is already %s with readers' share %s; ignoring %s with %s",
                name,
                windows,
                share,
                wanted,
                readers_share,
            )
        self.name = name
        self.windows = windows
        self.readers_share = share
        self._items: tuple[RateLimitItem, ...] = tuple(
            RateLimitItemPerSecond(c, p, namespace="upstream") for c, p in windows
        )
        #: Background work's own count: at most what the readers' share leaves of each window.
        self._background_items: tuple[RateLimitItem, ...] = tuple(
            RateLimitItemPerSecond(c - reserved(c, share), p, namespace="upstream-background")
            for c, p in windows
        )

    @classmethod
    def per_second(
        cls, name: str, rate: float, *, readers_share: float = READERS_SHARE
    ) -> "Throttle":
        """The budget ``name`` for a (possibly fractional) rate per second."""
        first, *more = windows_for_rate(rate)
        return cls(name, *first, *more, readers_share=readers_share)

    def __repr__(self) -> str:
        return f"Throttle({self.name!r}, windows={self.windows}, readers={self.readers_share})"

    async def acquire(self) -> None:
        """Wait for a free slot in every window, then take it; first come first served per loop,
        readers before background work (:func:`background`).

        Raises :class:`BudgetPaused` instead of waiting while the budget is paused,
        including when the pause begins during the wait.
        """
        await _acquire((self,))

    def pause(self, seconds: float) -> None:
        """The upstream asked us to wait: refuse every request of this budget until then,
        in every process of the host when the budgets are shared."""
        self._paused_here(seconds)
        if _state.shared is not None and _state.shared.available():
            _state.shared.pause(self.name, seconds)

    def _paused_here(self, seconds: float) -> None:
        until = time.monotonic() + seconds
        _state.paused_until[self.name] = max(_state.paused_until.get(self.name, 0.0), until)
        # Wake this loop's turns waiting for a slot (a pause comes from an answer on this loop).
        with contextlib.suppress(RuntimeError):
            waiting = _state.lines.get(asyncio.get_running_loop(), {}).get(self.name)
            if waiting is not None:
                waiting.wake()

    def paused_for(self) -> float:
        """Seconds left of a pause the upstream asked for (0 when none)."""
        return max(0.0, _state.paused_until.get(self.name, 0.0) - time.monotonic())

    def _refuse_if_paused(self) -> None:
        if (left := self.paused_for()) > 0:
            raise BudgetPaused(left)


async def _acquire(throttles: tuple[Throttle, ...]) -> None:
    """Take a slot of every budget of ``throttles`` at one moment: a request counted by one
    budget and then sent after a wait for another would arrive later than counted, and two such
    requests counted a window apart could reach the upstream less than a window apart.

    The request queues in each budget's line in turn (readers' or background work's), in the
    order given, and only once the first budget (the slowest) has a free slot does it queue for
    the others, so that its long wait holds up nobody's request of the other budgets only.
    """
    for budget in throttles:
        budget._refuse_if_paused()
    lines = [_line(budget.name) for budget in throttles]
    patience = [BACKGROUND_PATIENCE] if in_background() else None
    async with contextlib.AsyncExitStack() as held:
        for index, line in enumerate(lines):
            if patience is None:
                line.readers_waiting += 1
                held.callback(_reader_left, line)
                await line.readers.acquire()
                held.callback(line.readers.release)
            else:
                while not await _background_wait(line.background.acquire(), patience):
                    for budget in throttles:
                        budget._refuse_if_paused()
                held.callback(line.background.release)
            if index == 0 and len(lines) > 1:
                await _wait_for_slot(throttles[:1], lines[:1], patience, hit=False)
        await _wait_for_slot(throttles, lines, patience)


def _reader_left(line: _Line) -> None:
    line.readers_waiting -= 1
    if not line.readers_waiting:
        line.wake()  # background work waiting for the readers to be served goes on


async def _wait_for_slot(
    throttles: tuple[Throttle, ...],
    lines: list[_Line],
    patience: list[float] | None,
    hit: bool = True,
) -> None:
    """Take a slot of every budget (only wait until each has one, without ``hit``); ``patience``
    (background work's) is how much longer its deadline may still be moved, None for a reader's
    request, and background work waits while a reader is queued for any of the budgets."""
    background = patience is not None
    while True:
        for budget in throttles:
            budget._refuse_if_paused()
        if patience is not None and any(line.readers_waiting for line in lines):
            await _background_wait(_sleep(lines, READERS_TURN), patience)
            continue
        shared = _state.shared
        if shared is not None and shared.available():
            try:
                for budget in throttles:
                    if (left := await shared.paused_for(budget.name)) > 0:
                        budget._paused_here(left)  # another process was told to wait
                        raise BudgetPaused(left)
                reset_at = await _take(throttles, shared.strategy, background, hit)
            except shared.errors as error:
                shared.failed(error)
                continue
        else:
            reset_at = await _take(throttles, _counts(), background, hit)
        if reset_at is None:
            return
        seconds = max(0.001, reset_at - time.time())
        if patience is not None:
            await _background_wait(_sleep(lines, seconds), patience, seconds)
        else:
            await _sleep(lines, seconds)


async def _sleep(lines: list[_Line], seconds: float | None) -> None:
    """Up to ``seconds`` (None: no bound), or until any of ``lines`` wakes."""
    wakes = [asyncio.ensure_future(line.woken()) for line in lines]
    try:
        await asyncio.wait(wakes, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wake in wakes:
            wake.cancel()


async def _background_wait(
    waiting: Awaitable[object], patience: list[float], seconds: float = READERS_TURN
) -> bool:
    """Wait for ``waiting`` up to ``seconds``, the request's deadline moved later by as long
    while ``patience`` lasts: background work waiting for its turn is not the upstream being
    slow (:func:`~toshokan.sdk.deadline.postpone`); readers' deadlines stay as they are.
    Whether ``waiting`` finished."""
    started = time.monotonic()
    moved = min(seconds, patience[0])
    deadline.postpone(moved)
    patience[0] -= moved
    try:
        await asyncio.wait_for(waiting, seconds)
        done = True
    except TimeoutError:
        done = False
    slept = time.monotonic() - started
    # The deadline moves by the wait as it was: back by what was not waited when done early,
    # and on by what a busy event loop slept past the wait's end, while patience lasts (the
    # late wake-up is the host's, not the upstream's).
    change = slept - moved if slept < moved else min(slept - moved, patience[0])
    if change:
        deadline.postpone(change)
        patience[0] -= change
    return done


async def _take(
    throttles: tuple[Throttle, ...],
    strategy: MovingWindowRateLimiter,
    background: bool,
    hit: bool = True,
) -> float | None:
    """Take a slot in every window of every budget (only test, without ``hit``): None when
    taken, else when to look again (epoch), the latest reset among the full windows.

    Background work also takes one of its own share of each window (all but the readers'
    :func:`reserved` slots of the budget's ``readers_share``), so readers' requests never leave
    it less than that share and it never leaves readers less than theirs."""
    items = [
        (item, budget.name)
        for budget in throttles
        for item in (budget._background_items + budget._items if background else budget._items)
    ]
    # Nobody else of this loop takes a turn between test and hit; another process's hit in
    # between can only make a hit fail (each is atomic), and then we wait and check again
    # (a slot taken in one window and refused in the next is spent: stricter, never looser).
    if all([await strategy.test(item, name) for item, name in items]) and (
        not hit or all([await strategy.hit(item, name) for item, name in items])
    ):
        return None
    stats = [await strategy.get_window_stats(item, name) for item, name in items]
    return max((s.reset_time for s in stats if s.remaining < 1), default=0.0)


class AllOf:
    """Several budgets for one request (a page list counts against at-home *and* the API).

    Budgets that are all throttles (:class:`Throttle`) are taken at one moment (put the slowest
    first: it is waited for before the others are queued for, so that wait holds up
    nobody's request of the others only); any other limiter is taken one after another.
    """

    def __init__(self, *limiters: UpstreamLimiter):
        self.limiters = limiters

    async def acquire(self) -> None:
        throttles = tuple(limiter for limiter in self.limiters if isinstance(limiter, Throttle))
        if len(throttles) == len(self.limiters):
            await _acquire(throttles)
            return
        for limiter in self.limiters:
            await limiter.acquire()

    def pause(self, seconds: float) -> None:
        for limiter in self.limiters:
            limiter.pause(seconds)

    def paused_for(self) -> float:
        return max((limiter.paused_for() for limiter in self.limiters), default=0.0)
