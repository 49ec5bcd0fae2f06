"""Fixtures shared by every test package."""

from collections.abc import Iterator

import pytest

from toshokan.sdk import throttle


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def full_upstream_budgets() -> Iterator[None]:
    """Upstream budgets are process-wide; each test starts (and leaves others) a full one."""
    throttle.reset()
    yield
    throttle.reset()
