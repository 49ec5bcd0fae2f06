"""How a command ends on a configuration problem: its message on one line, never a traceback.

Apart from :mod:`toshokan.cli` so that every group of commands (the host's, the
follows') ends the same way without importing the command line that mounts it.
"""

import sys
from collections.abc import Callable
from typing import TypeVar

import click

from toshokan.config import ENV_PREFIX, ConfigFileError, HostSettings, explain
from toshokan.registry import AdapterLoadError

T = TypeVar("T")


def or_exit(action: Callable[[], T]) -> T:
    """Run ``action``; a configuration problem ends the command with its message, not a traceback."""
    from pydantic import ValidationError

    from toshokan.core.data_dir import DataDirError
    from toshokan.core.database import DatabaseUnavailable
    from toshokan.core.hosted import ConfigurationError

    try:
        return action()
    except (DatabaseUnavailable, DataDirError) as error:
        click.echo(f"toshokan: {error}", err=True)
        sys.exit(1)
    except (ConfigurationError, ConfigFileError, AdapterLoadError) as error:
        click.echo(f"toshokan: configuration error: {error}", err=True)
    except ValidationError as error:
        model = HostSettings if error.title == HostSettings.__name__ else None
        click.echo(f"toshokan: configuration error: {explain(error, model, ENV_PREFIX)}", err=True)
    sys.exit(2)
