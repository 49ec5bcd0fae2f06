"""What an adapter's ``toshokan`` subcommands get from the host: its resolved services.

A command decorated with :func:`pass_services` receives the same
:class:`HostServices` ``toshokan serve`` would build from ``--config``, the
environment and the defaults: the data directory, the User-Agent, the upstream
client. So ``toshokan scan`` writes the index where ``serve`` looks for it.
"""

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

import click

from toshokan.sdk.context import HostServices

P = ParamSpec("P")
R = TypeVar("R")
#: Where the ``toshokan`` command leaves a builder of the host's services for its subcommands.
SERVICES_KEY = "toshokan.services"


def pass_services(command: Callable[Concatenate[HostServices, P], R]) -> Callable[P, R]:
    """Call ``command`` with the host's services as its first argument."""

    @functools.wraps(command)
    def with_services(*args: P.args, **kwargs: P.kwargs) -> R:
        build: Callable[[], HostServices] | None = click.get_current_context().meta.get(
            SERVICES_KEY
        )
        if build is None:
            raise click.UsageError("this command runs as a `toshokan` subcommand")
        return command(build(), *args, **kwargs)

    return with_services


__all__ = ["SERVICES_KEY", "pass_services"]
