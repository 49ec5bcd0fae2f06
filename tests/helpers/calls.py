"""Counting the calls an operation makes in the host's own code: a speed guard that never flakes.

Seconds depend on the machine and on what else it runs; the calls a request makes do
not. :func:`count_calls` counts, on the current thread, every call into toshokan's own
code and every call toshokan's code makes (into the standard library, a C function or a
dependency), but not what a dependency does inside itself, so a new Starlette release
does not move the figure while a line of ours that adds work does. Warm the operation
up once before counting: first calls compile patterns and fill caches.

:func:`threads_counted` extends the count to threads started inside it (an executor's
workers, which a page hands its archive reads to), for as long as a count runs.

:func:`within_budget` fails with the figure broken down by file and function, so a
change that adds work says where it went.
"""

import logging
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import toshokan
from toshokan.logs import BatchedLines, LineFormatter, RequestIds, write_deferred

#: Where the host's own code lives; a frame whose file is under it is "ours".
OURS = str(Path(toshokan.__file__).resolve().parent)


def _ours(frame: FrameType | None) -> bool:
    return frame is not None and frame.f_code.co_filename.startswith(OURS)


def _name(frame: FrameType) -> str:
    code = frame.f_code
    return f"{code.co_filename.removeprefix(OURS + '/')}:{code.co_qualname}"


@dataclass
class Calls:
    """What an operation called: ``file:function`` (or ``C:name`` for built-ins) to count."""

    by_function: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.by_function.values())

    def by_file(self) -> Counter[str]:
        files: Counter[str] = Counter()
        for name, count in self.by_function.items():
            files[name.rsplit(":", 1)[0]] += count
        return files

    def breakdown(self, top: int = 25) -> str:
        """The figure by file, then the busiest functions: where a regression went."""
        lines = [f"{self.total} calls"]
        lines += [f"  {count:6d}  {name}" for name, count in self.by_file().most_common(top)]
        lines.append("busiest functions:")
        lines += [f"  {count:6d}  {name}" for name, count in self.by_function.most_common(top)]
        return "\n".join(lines)


#: The counts being made, innermost last; threads count into the innermost one too.
_counting: list[Counter[str]] = []


def _profile(frame: FrameType, event: str, arg: Any) -> None:
    if not _counting:
        return
    if event == "call":
        if _ours(frame) or _ours(frame.f_back):
            _counting[-1][_name(frame)] += 1
    elif event == "c_call" and _ours(frame):
        _counting[-1][f"C:{getattr(arg, '__qualname__', repr(arg))}"] += 1


@contextmanager
def count_calls() -> Iterator[Calls]:
    """Count, while the block runs on this thread, calls into or made by toshokan's code
    (and on threads started inside :func:`threads_counted`)."""
    calls = Calls()
    previous = sys.getprofile()
    _counting.append(calls.by_function)
    sys.setprofile(_profile)
    try:
        yield calls
    finally:
        sys.setprofile(previous)
        _counting.pop()


@contextmanager
def threads_counted() -> Iterator[None]:
    """Threads started inside this block count too while :func:`count_calls` runs (a
    thread's profile is set when it starts, so enter this before the pools start)."""
    threading.setprofile(_profile)
    try:
        yield
    finally:
        threading.setprofile(None)


def within_budget(calls: Calls, budget: int, what: str) -> None:
    """Fail when ``calls`` went over ``budget``, saying where they went."""
    assert calls.total <= budget, (
        f"{what} made {calls.total} calls, over its budget of {budget}: a change added work to "
        f"it. If the work is worth it, raise the budget with the reason.\n{calls.breakdown()}"
    )


@contextmanager
def access_log() -> Iterator[list[str]]:
    """The access log at info, as the host configures it: one handler of the host's, writing
    to a list, and no other (pytest's capturing handlers are put back after)."""
    write_deferred()  # lines of earlier tests, to their own handlers
    lines: list[str] = []
    handler = BatchedLines(write=lines.append)
    handler.addFilter(RequestIds())
    handler.setFormatter(LineFormatter())
    logger = logging.getLogger("toshokan.access")
    handlers, level = logger.handlers, logger.level
    logger.handlers = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield lines
    finally:
        logger.handlers = handlers
        logger.setLevel(level)
        logger.propagate = True
