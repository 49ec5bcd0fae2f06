"""The host's log output: one format for every line, written in batches.

Every line the host writes goes through Python's :mod:`logging`: its own
(``toshokan.*``, the access log ``toshokan.access`` among them) and
uvicorn's, whose own formatting is left off. So an operator routes, filters
or reformats any of them with logging's configuration, and stderr carries
one format by default.

Formatting a record costs little; writing one line per request to stderr
costs more than the rest of a cached answer. :class:`BatchedLines` keeps the
access log's lines and writes them together, at most a fraction of a second
late; any other line is written at once, after those kept, so nothing is
held back when the server stops (uvicorn ends a stopped process by raising
its signal again, which skips logging's own flush at exit).
"""

import asyncio
import logging
import sys
from collections.abc import Callable
from typing import Any

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: The loggers whose lines are kept for a batched write: one line per request.
BATCHED = "toshokan.access"
#: Lines kept before a write; and the longest a line waits for one.
BATCH_LINES = 128
FLUSH_SECONDS = 0.25


class BatchedLines(logging.Handler):
    """A handler writing formatted lines to ``write`` (stderr by default), the access log's
    in batches."""

    def __init__(self, write: Callable[[str], Any] | None = None, level: int = logging.NOTSET):
        super().__init__(level)
        self._write = write
        self._lines: list[str] = []
        self._scheduled = False

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._lines.append(self.format(record) + "\n")
        except Exception:
            self.handleError(record)
            return
        if record.name != BATCHED or len(self._lines) >= BATCH_LINES:
            self.flush()
        elif not self._scheduled:
            self._schedule()

    def _schedule(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()  # no event loop in this thread to write later
            return
        self._scheduled = True
        loop.call_later(FLUSH_SECONDS, self.flush)

    def flush(self) -> None:
        self.acquire()
        try:
            self._scheduled = False
            text = "".join(self._lines)
            self._lines.clear()
        finally:
            self.release()
        if not text:
            return
        try:
            if self._write is not None:
                self._write(text)
            else:
                sys.stderr.write(text)
                sys.stderr.flush()
        except (OSError, ValueError):
            pass  # a closed log stream must not fail requests


def configure_logging(level: str) -> None:
    """The host's default: every logger at ``level`` through one :class:`BatchedLines`."""
    handler = BatchedLines()
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    logging.basicConfig(level=level.upper(), handlers=[handler])
