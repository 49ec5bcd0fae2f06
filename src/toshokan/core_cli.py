"""The host's core as the ``follows`` and ``downloads`` commands open it, and their ``--reader``.

Apart from either group so that both open the core, end on a refusal and name a reader the
same way without one group importing the other's commands.
"""

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from toshokan.config import load_settings

T = TypeVar("T")
READER = click.option(
    "--reader", "reader", help="The reader (default: the one implicit reader of a host without)."
)


def _config() -> Path | None:
    config: Path | None = click.get_current_context().find_root().params.get("config")
    return config


@asynccontextmanager
async def _core(start_sources: bool) -> AsyncIterator[Any]:
    """The host's core for ``--config``: its sources started only when the command asks them."""
    from toshokan.core import Core, HostedSources
    from toshokan.core.face import names_of
    from toshokan.exits import or_exit
    from toshokan.faces import FACES

    settings = or_exit(lambda: load_settings(_config()))
    sources = or_exit(lambda: HostedSources.from_settings(settings, face_names=names_of(FACES)))
    core = or_exit(lambda: Core(settings, sources))
    if start_sources:
        await core.startup(background=False)
    else:
        await core.follows.open()
    try:
        yield core
    finally:
        await core.shutdown(started=start_sources)


def run_on_core(work: Callable[[Any], Awaitable[T]], *, start_sources: bool = False) -> T:
    """Run ``work(core)``; a refusal (unknown source or series, a bad URL) is one line, exit 1."""
    from toshokan.errors import HostError

    async def main() -> T:
        async with _core(start_sources) as core:
            return await work(core)

    try:
        return asyncio.run(main())
    except HostError as error:
        click.echo(f"toshokan: {error.message}", err=True)
        sys.exit(1)


async def named_reader(core: Any, name: str | None) -> str:
    """The reader named (who must exist), or the implicit one on a host without readers."""
    from toshokan.core.progress import IMPLICIT_READER
    from toshokan.errors import InvalidRequest

    readers = core.readers.readers
    if name is None:
        if await asyncio.to_thread(readers.any):
            raise InvalidRequest("this host has readers: name one with --reader")
        return IMPLICIT_READER
    if await asyncio.to_thread(readers.stored, name) is None:
        raise InvalidRequest(f"no reader is named {name!r}")
    return name
