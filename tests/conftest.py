"""Fixtures shared by every test package.

Fixtures more than one folder uses live in ``tests/helpers`` modules, registered here as
plugins, so that no folder imports another's conftest.
"""

from collections.abc import Iterator

import pytest

from toshokan.logs import write_deferred
from toshokan.sdk import throttle

pytest_plugins = [
    "tests.helpers.databases",
    "tests.helpers.hosts",
    "tests.helpers.isolation",
    "tests.helpers.libraries",
    "tests.helpers.local_sources",
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def full_upstream_budgets() -> Iterator[None]:
    """Upstream budgets are process-wide; each test starts (and leaves others) a full one."""
    throttle.reset()
    yield
    throttle.reset()


@pytest.fixture(autouse=True)
def access_lines_written() -> Iterator[None]:
    """The access lines a test's requests made are written before it ends, to the handlers it
    set up, not to a later test's (the log's writer thread writes them a moment later)."""
    yield
    write_deferred()
