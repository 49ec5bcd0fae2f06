"""Whether the host can serve, for load balancers: a registry of named checks.

A replica that cannot reach a dependency it needs (the shared database)
should be taken out of rotation rather than answer errors, so the host
answers ``/_/ready`` from the checks registered here: each is an awaitable
that returns when its dependency answers and raises when it does not. A
*required* check that fails makes the host unready (503); an optional one is
reported but leaves it ready, for a dependency the host can do without (a
shared cache it falls back from). Whatever registers a check calls
:meth:`Readiness.add` on the core's registry: the core registers ``postgresql``
(required) for ``[cluster] database`` and the cluster each Redis (optional).

Checks run concurrently, each within :data:`CHECK_SECONDS`, so one dependency
that hangs answers as down rather than holding the load balancer's probe. A
failing check's detail is its exception's type and message, cut short: a
check must raise messages without credentials, since the answer is public.
"""

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

#: Seconds a check has to answer before it counts as down.
CHECK_SECONDS = 2.0
#: Characters of a failure's message kept in the answer.
MAX_DETAIL = 200

Check = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class Registered:
    check: Check
    required: bool


class Readiness:
    """The named checks of one host, and their answer."""

    def __init__(self) -> None:
        self._checks: dict[str, Registered] = {}

    def add(self, name: str, check: Check, *, required: bool = True) -> None:
        """Register ``check`` under ``name`` (replacing one of that name)."""
        self._checks[name] = Registered(check, required)

    async def report(self) -> tuple[bool, dict[str, Any]]:
        """Whether every required check passed, and each check's state."""
        names = list(self._checks)
        states = await asyncio.gather(*(self._run(self._checks[name]) for name in names))
        ready = all(
            state["status"] == "up" or not self._checks[name].required
            for name, state in zip(names, states, strict=True)
        )
        return ready, dict(zip(names, states, strict=True))

    async def _run(self, registered: Registered) -> dict[str, Any]:
        started = time.perf_counter()
        state: dict[str, Any] = {"status": "up", "required": registered.required}
        try:
            async with asyncio.timeout(CHECK_SECONDS):
                await registered.check()
        except TimeoutError:
            state.update(status="down", detail=f"no answer within {CHECK_SECONDS:g} s")
        except Exception as error:
            state.update(status="down", detail=_detail(error))
        state["seconds"] = round(time.perf_counter() - started, 4)
        return state


def _detail(error: Exception) -> str:
    message = " ".join(str(error).split())
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return text if len(text) <= MAX_DETAIL else text[: MAX_DETAIL - 1] + "…"
