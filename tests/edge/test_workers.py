"""Worker processes start their sources one at a time: a library index is never raced."""

import asyncio
from pathlib import Path
from typing import Any

import pytest

from toshokan.serving import one_startup_at_a_time

pytestmark = pytest.mark.anyio


async def test_startups_take_turns(tmp_path: Path) -> None:
    running = 0
    most = 0

    async def app(scope: Any, receive: Any, send: Any) -> None:
        nonlocal running, most
        await receive()
        running += 1
        most = max(most, running)
        await asyncio.sleep(0.2)  # a source indexing its folder
        running -= 1
        await send({"type": "lifespan.startup.complete"})
        await receive()
        await send({"type": "lifespan.shutdown.complete"})

    async def lifespan(sent: list[str]) -> None:
        messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

        async def receive() -> Any:
            return next(messages)

        async def send(message: Any) -> None:
            sent.append(message["type"])

        wrapped = one_startup_at_a_time(app, tmp_path / "data" / "startup.lock")
        await wrapped({"type": "lifespan"}, receive, send)

    first: list[str] = []
    second: list[str] = []
    await asyncio.gather(lifespan(first), lifespan(second))
    assert most == 1
    assert first == second == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
