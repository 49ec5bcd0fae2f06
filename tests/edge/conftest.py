"""What the access log writes, as the edge tests read it."""

import logging
from collections.abc import Iterator

import pytest

from toshokan.logs import LOG_FORMAT, BatchedLines, write_deferred


@pytest.fixture
def access_lines() -> Iterator[tuple[list[str], BatchedLines]]:
    """What the access log writes, through the host's own handler and format."""
    write_deferred()  # lines of earlier tests, to their own handlers
    lines: list[str] = []
    handler = BatchedLines(write=lines.append)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    logger = logging.getLogger("toshokan.access")
    logger.addHandler(handler)
    try:
        yield lines, handler
    finally:
        logger.removeHandler(handler)
