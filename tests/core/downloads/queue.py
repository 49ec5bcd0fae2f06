"""A host keeping series of the fake MangaDex in its local library, and what the tests ask of it."""

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

from tests.sources.mangadex.fake import API, REPORT, UPLOADS, FakeMangaDex
from tests.sources.mangadex.image_servers import ImageServers
from toshokan.core.downloads import Download
from toshokan.sources.local import LocalLibrary, LocalSettings
from toshokan.sources.mangadex import MangaDex, Settings
from toshokan.testing import ServedHost, serve_host

T = TypeVar("T")
#: The implicit reader of a host without readers (the operator, too).
ANYONE = ""


@asynccontextmanager
async def keeping_host(
    servers: ImageServers,
    library: Path,
    data_dir: Path,
    database_url: str | None,
    **keep: Any,
) -> AsyncIterator[ServedHost]:
    sources: dict[str, Any] = {
        "local": (LocalLibrary, LocalSettings(root=library, watch=True, start_wait=5)),
        "mangadex": (
            MangaDex,
            Settings(api_url=API, uploads_url=UPLOADS, report_url=REPORT, languages=["en", "es"]),
        ),
    }
    async with serve_host(
        sources,
        upstream=servers,
        data_dir=data_dir,
        limits={"rate_limit": 0},
        follows={"round": 1},
        keep=keep,
        cluster={"database": database_url},
    ) as served:
        yield served


async def until(check: Callable[[], Awaitable[T | None]], seconds: float = 30.0) -> T:
    deadline = time.monotonic() + seconds
    while True:
        found = await check()
        if found:
            return found
        assert time.monotonic() < deadline, "not within the time"
        await asyncio.sleep(0.1)


def pirates(fake: FakeMangaDex) -> str:
    return next(m.id for m in fake.manga.values() if m.title["en"] == "Pirate Voyage")


async def follow_and_keep(host: ServedHost, manga: str, **filters: Any) -> None:
    """Follow and keep the series; return once its first check recorded what exists."""
    core = host.core
    await core.follows.follow(ANYONE, "mangadex", manga)

    async def checked() -> bool:
        series = await asyncio.to_thread(core.follows.store.series, "mangadex", manga)
        return series is not None and series.state == "ok"

    await until(checked)
    await core.downloads.keep(ANYONE, "mangadex", manga, **filters)


async def check_now(host: ServedHost, manga: str) -> None:
    """Check the series now, as a reader's "check now" does (once a round at most)."""
    await asyncio.sleep(1.1)
    await host.core.follows.check_now(ANYONE, ("mangadex", manga))


async def downloads(host: ServedHost) -> list[Download]:
    return (await host.core.downloads.listing(None, limit=1000)).downloads


async def settled(
    host: ServedHost, count: int, states: tuple[str, ...] = ("done",), seconds: float = 30.0
) -> list[Download]:
    """The downloads once ``count`` of them are in ``states``."""

    async def enough() -> list[Download] | None:
        rows = await downloads(host)
        return rows if sum(d.state in states for d in rows) >= count else None

    return await until(enough, seconds)


def cbz_files(library: Path) -> list[str]:
    return sorted(str(p.relative_to(library)) for p in library.rglob("*.cbz"))


def _mount(*arguments: str) -> None:
    """Mount, or skip the test when mounting is refused (not root, or root without the right to
    mount, as in many containers); any other failure fails the test."""
    import os
    import subprocess

    import pytest

    if os.geteuid() != 0:
        pytest.skip(f"mounting is refused: not root (uid {os.geteuid()})")
    done = subprocess.run(["mount", *arguments], capture_output=True, text=True, check=False)
    said = done.stderr.strip()
    if done.returncode != 0 and any(
        refusal in said.lower()
        for refusal in ("permission denied", "not permitted", "must be superuser")
    ):
        pytest.skip(f"mounting is refused: {said.splitlines()[0]}")
    assert done.returncode == 0, f"mount {' '.join(arguments)}: {said}"


def _umount(folder: Path) -> None:
    """Unmount ``folder``; lazily (once nothing holds it) when a process still holds a file."""
    import subprocess

    if subprocess.run(["umount", str(folder)], capture_output=True, check=False).returncode:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=True)


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` and everything in it cannot be written while the block runs: a read-only bind
    mount for root (whom permissions do not stop), the permission bits for anyone else."""
    import os

    if os.geteuid() != 0:
        folders = [folder, *(p for p in folder.rglob("*") if p.is_dir())]
        for each in folders:
            each.chmod(0o555)
        try:
            yield
        finally:
            for each in folders:
                each.chmod(0o755)
        return
    _mount("--bind", str(folder), str(folder))
    try:
        _mount("-o", "remount,bind,ro", str(folder))
        yield
    finally:
        _umount(folder)


@contextmanager
def small_disk(folder: Path, size: str = "4m") -> Iterator[None]:
    """``folder`` (empty) on a file system of its own of ``size`` (a tmpfs) while the block runs;
    the test is skipped where mounting is refused."""
    _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder))
    try:
        yield
    finally:
        _umount(folder)


def kept_files(library: Path) -> dict[str, bytes]:
    """Every CBZ in the library, and its bytes."""
    return {str(p.relative_to(library)): p.read_bytes() for p in library.rglob("*.cbz")}
