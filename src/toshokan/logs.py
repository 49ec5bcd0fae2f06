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

With ``[server] log_format = "json"`` (``--log-format json``) every line is
one JSON object (``python-json-logger``), for log collectors: the time,
level, logger and message, the request id, and the access line's fields
(client, method, path, status, milliseconds) as fields of their own. The
request id (:data:`REQUEST_ID`, set by the edge for each request, from a sane
``X-Request-Id`` or made up) is on every line written while that request is
handled, the host's own and its access line alike, so one request's lines
are found together; a line outside any request carries ``-``.
"""

import asyncio
import logging
import sys
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from pythonjsonlogger.json import JsonFormatter

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: The fields of a JSON line, besides those a line adds itself (the access line's).
JSON_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s"
JSON_NAMES = {"asctime": "time", "levelname": "level", "name": "logger"}
#: The request being handled, as the edge named it; ``-`` outside any request.
REQUEST_ID: ContextVar[str] = ContextVar("toshokan_request_id", default="-")
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


class RequestIds(logging.Filter):
    """Puts the current request's id on every record, as ``request_id``."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


def json_formatter() -> logging.Formatter:
    """One JSON object a line; control characters and quotes are escaped by JSON itself."""
    return JsonFormatter(JSON_FORMAT, rename_fields=JSON_NAMES, datefmt="%Y-%m-%dT%H:%M:%S%z")


def configure_logging(level: str, log_format: str = "text") -> None:
    """The host's default: every logger at ``level`` through one :class:`BatchedLines`, as
    text or (``log_format="json"``) JSON lines."""
    handler = BatchedLines()
    handler.addFilter(RequestIds())
    handler.setFormatter(
        json_formatter() if log_format == "json" else logging.Formatter(LOG_FORMAT)
    )
    logging.basicConfig(level=level.upper(), handlers=[handler])
