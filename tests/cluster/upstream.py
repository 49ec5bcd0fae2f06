"""A fake upstream served on a loopback port, so replica processes reach it as they would MangaDex."""

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
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


def process_group(leader: int) -> set[int]:
    """The processes of the group ``leader`` leads (a replica and, with ``--workers``, its
    workers), as /proc lists them."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # ``pid (name) state ppid pgrp ...``: the name may hold spaces, so split after it.
        if int(stat.rpartition(")")[2].split()[2]) == leader:
            found.add(int(entry.name))
    return found


def connected_from(port: int, pids: set[int]) -> bool:
    """Whether the loopback TCP connection whose client end is ``port`` belongs to one of
    ``pids`` (its socket is among their open files), as /proc tells."""
    wanted = f"0100007F:{port:04X}"
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == wanted:
            inodes.add(f"socket:[{fields[9]}]")
    for pid in pids:
        try:
            files = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for file in files:
            with suppress(OSError):
                if os.readlink(file) in inodes:
                    return True
    return False
