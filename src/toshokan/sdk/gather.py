"""Run several upstream requests at once, at most ``limit`` at a time, and fail like one.

``asyncio.TaskGroup`` cancels the siblings of a failed task (no requests are
wasted on an answer that cannot be used) but raises an ``ExceptionGroup``;
the host renders ``HostError``s, so the first one is unwrapped and raised as
itself. The bound keeps one client request from queueing hundreds of tasks
(and their memory) behind a rate budget; tasks inherit the caller's context,
and so its upstream deadline.
"""

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar, overload

from toshokan.errors import HostError

T = TypeVar("T")
U = TypeVar("U")
#: How many requests of one gathering are in flight at once unless the caller says otherwise.
DEFAULT_LIMIT = 4


@overload
async def gather(
    first: Coroutine[Any, Any, T], second: Coroutine[Any, Any, U], /, *, limit: int = ...
) -> tuple[T, U]: ...


@overload
async def gather(*coroutines: Coroutine[Any, Any, T], limit: int = ...) -> tuple[T, ...]: ...


async def gather(
    *coroutines: Coroutine[Any, Any, Any], limit: int = DEFAULT_LIMIT
) -> tuple[Any, ...]:
    """Results in argument order; the first host error (or other failure) is raised as itself.

    Each coroutine starts only when one of ``limit`` slots is free; those that
    never started because a sibling failed are closed, not left unawaited.
    """
    if limit < 1:
        raise ValueError(f"a gathering needs at least one slot, not {limit}")
    slots = asyncio.Semaphore(limit)

    async def run(coroutine: Coroutine[Any, Any, Any]) -> Any:
        try:
            async with slots:
                return await coroutine
        finally:
            coroutine.close()

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(run(c)) for c in coroutines]
    except BaseExceptionGroup as failed:
        raise _first_leaf(failed) from None
    return tuple(task.result() for task in tasks)


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    leaves: list[BaseException] = []
    stack: list[BaseException] = [group]
    while stack:
        error = stack.pop(0)
        if isinstance(error, BaseExceptionGroup):
            stack[:0] = list(error.exceptions)
        else:
            leaves.append(error)
    return next((e for e in leaves if isinstance(e, HostError)), leaves[0])
