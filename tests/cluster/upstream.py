"""A fake upstream served on a loopback port, so replica processes reach it as they would MangaDex."""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import uvicorn

from tests.helpers.serving import free_port


@contextmanager
def served(app: Any) -> Iterator[str]:
    """Serve the ASGI ``app`` on a free loopback port in a thread; yield its base URL."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise AssertionError("the fake upstream did not start")
        time.sleep(0.02)
    try:
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def most_in_any_window(times: list[float], width: float) -> int:
    """The most of ``times`` that fall in any window of ``width`` seconds."""
    times = sorted(times)
    return max(
        (sum(1 for t in times[i:] if t - times[i] < width) for i in range(len(times))), default=0
    )


def get(url: str, **options: Any) -> httpx.Response:
    return httpx.get(url, timeout=options.pop("timeout", 30), **options)
