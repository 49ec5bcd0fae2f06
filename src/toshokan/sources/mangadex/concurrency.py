"""Run a few upstream requests at once and fail like one request would.

``asyncio.TaskGroup`` cancels the siblings of a failed task (no requests are
wasted on an answer that cannot be used) but raises an ``ExceptionGroup``;
the host renders ``HostError``s, so the first one is unwrapped and raised
as itself.
"""

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from toshokan.errors import HostError

T = TypeVar("T")


async def gather(*coroutines: Coroutine[Any, Any, T]) -> list[T]:
    """Results in argument order; the first host error (or other failure) is raised as itself."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(c) for c in coroutines]
    except BaseExceptionGroup as failed:
        raise _first_leaf(failed) from None
    return [task.result() for task in tasks]


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
