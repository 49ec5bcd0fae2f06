"""The host's log output: one format for every line, the access log's made, formatted and
written off the request path, in batches.

Every line the host writes goes through Python's :mod:`logging`: its own
(``toshokan.*``, the access log ``toshokan.access`` among them) and
uvicorn's, whose own formatting is left off. So an operator routes, filters
or reformats any of them with logging's configuration, and stderr carries
one format by default.

Making a record, formatting it and writing it cost more than the rest of a
cached answer. The access log keeps each request's parts (:class:`Deferred`:
one list extended), and a writer thread makes their records, hands them to the
logger's handlers like any other record and has them written in one write,
:data:`FLUSH_SECONDS` after the first of them, in the time the batch takes
(the thread pauses for the event loop, :data:`PAUSES_AT_MOST` in all at
most): a process killed outright loses about that much of its access log
(measured: 0.26 s median, 0.34 s at most on a busy machine, see
docs/performance.md), well under a second. When every handler a
record would reach is the host's own text one (:meth:`BatchedLines.plain`),
the thread writes the lines those records would make, byte for byte, without
making them (a record and its formatting were most of what a line cost);
once an operator's configuration puts any other handler, formatter or filter
on the way, or with JSON lines, it makes the records. Any other line (a
warning, an error, uvicorn's start and stop) is written at once, after the
access lines kept before it, so lines keep their order and nothing is held
back when the server stops (uvicorn ends a stopped process by raising its
signal again, which skips logging's own flush at exit; its last line is
written at once, and everything before it).

With ``[server] log_format = "json"`` (``--log-format json``) every line is
one JSON object (``python-json-logger``), for log collectors: the time,
level, logger and message, the request id, and the access line's fields
(client, method, path, status, milliseconds) as fields of their own. The
request id (:data:`REQUEST_ID`, set by the edge for each request, from a sane
``X-Request-Id`` or made up) is on every line written while that request is
handled, the host's own and its access line alike, so one request's lines
are found together; a line outside any request carries ``-``. It is taken
when the line is logged, in the request's context, not when it is written.
"""

import logging
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from itertools import repeat
from math import floor
from operator import add, mul, sub
from typing import Any, cast

from pythonjsonlogger.json import JsonFormatter

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: The fields of a JSON line, besides those a line adds itself (the access line's).
JSON_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s"
JSON_NAMES = {"asctime": "time", "levelname": "level", "name": "logger"}
#: The request being handled, as the edge named it; ``-`` outside any request.
REQUEST_ID: ContextVar[str] = ContextVar("toshokan_request_id", default="-")
#: The logger whose records are written in batches: one line per request.
BATCHED = "toshokan.access"
#: The longest a kept record waits before the writer thread writes it.
FLUSH_SECONDS = 0.25
#: Lines the writer thread makes at once.
CHUNK = 100
#: How long the writer thread works before it pauses, and how long it pauses: the
#: interpreter's lock left to the event loop about once a millisecond. Each pause costs
#: the thread as much again as the lines it follows would if they came every tenth of a
#: millisecond (measured under load: 2.1 against 1.1 µs of CPU a line). A pause may take
#: longer on a busy machine: past ``PAUSES_AT_MOST`` a batch is written without them, so
#: lines are not held back more than that.
WORK_SECONDS = 0.001
PAUSE_SECONDS = 0.0001
PAUSES_AT_MOST = 0.05
#: Records kept at most; past it the thread logging writes them itself (a stalled stream).
MAX_KEPT = 16_384
#: Texts of seconds a :class:`LineFormatter` keeps for the lines of batches.
KEPT_TIMES = 64
#: How a handler writes the times of lines: their ``asctime`` and ``msecs``, each line's.
Stamps = Callable[[Sequence[float]], tuple[Iterable[str], Iterable[float]]]


class Deferred:
    """Records of one logger kept as their parts on the request path, then made and handled
    by a writer thread, a batch at a time.

    Keeping a record costs an extend (:meth:`kept_more` says how): a record's
    ``width`` parts are kept one after the other in one list, so a line leaves
    the writer nothing to read or free
    but its parts (the tuple they come in is freed at once, by the thread that
    made it, and the writer takes each part of a batch's lines as one slice).
    The record is made from the parts (``make``),
    passed to the logger's handlers like any other and written later (or,
    for handlers that write only the line its time and message make, the text
    of a batch of such lines at once: ``text``),
    :data:`FLUSH_SECONDS` after the first part kept at most, by a thread of
    its own. So its caller pays neither the record nor its formatting nor the
    write. A line of any other logger written through :class:`BatchedLines`
    first has every kept record written before it: lines keep their order.
    Past :data:`MAX_KEPT` records (a stalled log stream) the caller handles
    them itself, as a plain handler would: memory stays bounded and nothing
    is dropped.
    """

    def __init__(
        self,
        logger: logging.Logger,
        make: Callable[[Any], logging.LogRecord],
        text: Callable[[list[list[Any]], Stamps, str], str],
        width: int,
    ):
        self.logger = logger
        self.make = make
        self.text = text
        self.width = width
        # The parts of every record kept, flat: appended to at the end (one call holding the
        # interpreter's lock) while the writer takes from the start. Always this one list
        # (cleared and cut in place), so a caller may hold it.
        self.kept: list[Any] = []
        #: The parts kept at most (:data:`MAX_KEPT` records).
        self.most = MAX_KEPT * width
        #: Whether a write is due (the writer thread woken).
        self.armed = False
        self._forget()
        _DEFERRED.append(self)
        # A forked child writes its own lines, not a copy of its parent's kept ones, with a
        # writer thread of its own (the parent's is not in the child, and may have held
        # the wake-up's lock at the fork).
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self.kept.clear()
        self.armed = False
        self._wake = threading.Event()
        self._writer: threading.Thread | None = None

    def kept_more(self) -> None:
        """After parts were kept: arm the write :data:`FLUSH_SECONDS` later when none is
        armed, or write now past :data:`MAX_KEPT` records. A record is kept in line, with
        no call of its own: ``kept.extend(parts)``, then this when ``not armed or
        len(kept) > most``."""
        if not self.armed:
            self.armed = True
            if self._writer is None:
                # One thread for the process's life: a thread started for every batch cost
                # the request arming it the thread's start, a switch to it and back.
                self._writer = threading.Thread(
                    target=self._writing, name="toshokan-log-writer", daemon=True
                )
                self._writer.start()
            self._wake.set()
        elif len(self.kept) > self.most:
            self.write()

    def _writing(self) -> None:
        wake = self._wake
        while True:
            wake.wait()
            wake.clear()  # before the write is due: a record kept after it wakes the next
            time.sleep(FLUSH_SECONDS)
            # Disarmed before the parts are taken: one kept after this arms the next write.
            self.armed = False
            try:
                self.write()
            except Exception:  # as a thread's end would report it, without ending the writing
                traceback.print_exc()

    def write(self) -> None:
        """Make and handle every record kept, then flush the handlers they reached."""
        with _WRITING:
            kept = self.kept
            if not kept:
                return
            _batch.writing = True
            try:
                self._write(kept)
            finally:
                _batch.writing = False

    def _take(self, count: int) -> list[list[Any]]:
        """The parts of the ``count`` oldest records kept, a list each part, taken out at
        once (the list's start moved once a batch)."""
        kept, width = self.kept, self.width
        taken = kept[: count * width]
        del kept[: count * width]  # what was kept meanwhile went to the end
        return [taken[part::width] for part in range(width)]

    def _write(self, kept: list[Any]) -> None:
        make, count = self.make, len(kept) // self.width
        columns = self._take(count)
        # Each record's first part is when it was made by the monotonic clock (the request
        # path reads no wall clock for it); its wall time is that plus the two clocks'
        # difference, read once a batch: lines a batch apart keep their order and their
        # time to well under a millisecond (only a step of the wall clock within the
        # batch's FLUSH_SECONDS moves them, as it would have moved their neighbours).
        offset = time.time() - time.monotonic()
        columns[0] = list(map(add, columns[0], repeat(offset)))
        batched = self._handlers()
        if batched is not None and all(handler.plain() for handler in batched):
            # Lines the host's own handlers would write from the records, made without them,
            # a chunk of lines at a time.
            text = self.text
            head = f" {logging.getLevelName(logging.INFO)} {self.logger.name}: "
            worked_from = time.monotonic()
            pauses_until = worked_from + PAUSES_AT_MOST
            for start in range(0, count, CHUNK):
                chunk = [column[start : start + CHUNK] for column in columns]
                for handler in batched:
                    handler.take_text(text(chunk, handler.stamps(), head))
                now = time.monotonic()
                if (
                    now - worked_from >= WORK_SECONDS
                    and start + CHUNK < count
                    and now < pauses_until
                ):
                    # The event loop waiting for the interpreter's lock gets it now rather
                    # than after the interpreter's switch interval (5 ms, every request in
                    # flight held up by as much).
                    time.sleep(PAUSE_SECONDS)
                    worked_from = time.monotonic()
            for handler in batched:
                handler.flush()
            return
        # Made one at a time and dropped once written: a batch of records alive at once
        # would have the garbage collector walk the whole heap.
        records = map(make, zip(*columns, strict=True))
        if batched is not None and len(batched) == 1:
            batched[0].take(records)
        elif batched is not None:
            made = list(records)
            for handler in batched:
                handler.take(made)
        else:
            for record in records:
                self.logger.handle(record)
        for reached in batched or self._reached():
            reached.flush()

    def _reached(self) -> list[logging.Handler]:
        """The handlers a record of the logger reaches, as :meth:`logging.Logger.callHandlers`
        walks them."""
        reached: list[logging.Handler] = []
        logger: logging.Logger | None = self.logger
        while logger is not None:
            reached += logger.handlers
            logger = logger.parent if logger.propagate else None
        return reached

    def _handlers(self) -> "list[BatchedLines] | None":
        """The handlers records reach, when every one is a :class:`BatchedLines` taking them at
        info level and the logger has no filter of its own (the host's configuration): those
        take a batch at once, with the same lines as record by record. Else ``None``."""
        if self.logger.disabled or self.logger.filters:
            return None
        reached = self._reached()
        if not reached or not all(
            isinstance(h, BatchedLines) and h.level <= logging.INFO for h in reached
        ):
            return None
        return cast("list[BatchedLines]", reached)


#: Every :class:`Deferred`, for a line of another logger to write what they keep first.
_DEFERRED: list[Deferred] = []
#: Held while kept records are written: one batch at a time, in order.
_WRITING = threading.RLock()
#: ``writing`` is true on the thread writing a batch: its lines wait for the batch's end.
_batch = threading.local()


def write_deferred() -> None:
    """Write every record kept so far (before a line that must follow them)."""
    for deferred in _DEFERRED:
        deferred.write()


class BatchedLines(logging.Handler):
    """A handler writing formatted lines to ``write`` (stderr by default): the access log's
    when flushed (a :class:`Deferred` batch ends with a flush), any other at once, after the
    access log's records kept before it."""

    def __init__(self, write: Callable[[str], Any] | None = None, level: int = logging.NOTSET):
        super().__init__(level)
        self._write = write
        self._lines: list[str] = []

    def handle(self, record: logging.LogRecord) -> bool:
        if record.name != BATCHED:
            write_deferred()  # before taking this handler's lock, as the writer thread does
        return super().handle(record)

    def take(self, records: Iterable[logging.LogRecord]) -> None:
        """Records of one batch, each filtered and formatted as :meth:`handle` would, under
        one lock; written at the batch's end."""
        self.acquire()
        try:
            lines = self._lines
            for record in records:
                if self.filter(record):
                    try:
                        lines.append(self.format(record))
                    except Exception:
                        self.handleError(record)
        finally:
            self.release()

    def plain(self) -> bool:
        """Whether this handler writes a record of the batched logger as nothing but
        :class:`LineFormatter`'s line of its time, level, logger and message: true with the
        host's own formatter and filter, false once an operator sets others."""
        return type(self.formatter) is LineFormatter and all(
            type(f) is RequestIds for f in self.filters
        )

    def stamps(self) -> Stamps:
        """How this :meth:`plain` handler writes the times of lines (its formatter's)."""
        return cast(LineFormatter, self.formatter).stamps

    def take_text(self, text: str) -> None:
        """Lines made as :meth:`take` would write them for a :meth:`plain` handler, one text."""
        self.acquire()
        try:
            self._lines.append(text)
        finally:
            self.release()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._lines.append(self.format(record))
        except Exception:
            self.handleError(record)
            return
        if not getattr(_batch, "writing", False) or len(self._lines) > MAX_KEPT:
            self._flush()

    def flush(self) -> None:
        """Write every line logged so far, the access log's kept records among them."""
        write_deferred()
        self.acquire()
        try:
            self._flush()
        finally:
            self.release()

    def _flush(self) -> None:
        if not self._lines:
            return
        self._lines.append("")
        text = "\n".join(self._lines)
        self._lines.clear()
        try:
            if self._write is not None:
                self._write(text)
            else:
                sys.stderr.write(text)
                sys.stderr.flush()
        except (OSError, ValueError):
            pass  # a closed log stream must not fail requests


class LineFormatter(logging.Formatter):
    """The host's lines (:data:`LOG_FORMAT`), exactly as ``logging.Formatter(LOG_FORMAT)``
    writes them, at less cost: the time's text is made once a second (``time.strftime`` is
    most of what formatting a short line costs), and the line is put together directly."""

    def __init__(self) -> None:
        super().__init__(LOG_FORMAT)
        self._second = -1
        self._text = ""
        self._texts = _Seconds(self.second_text)

    def format(self, record: logging.LogRecord) -> str:
        if record.exc_info or record.exc_text or record.stack_info:
            return super().format(record)
        record.message = message = record.getMessage()
        record.asctime = asctime = self.formatTime(record)
        return f"{asctime} {record.levelname} {record.name}: {message}"

    def stamps(self, times: Sequence[float]) -> tuple[Iterable[str], Iterable[float]]:
        """The text of the time and the milliseconds :meth:`format` writes for records made at
        each of ``times`` (``asctime``, and ``msecs`` to be written as ``%03d`` writes it, which
        drops the fraction as ``int`` does), without the records, a batch of lines at once."""
        # floor is int for a time after 1970, at less cost than int's constructor.
        seconds = list(map(floor, times))
        # A record's msecs, as logging makes it from its time: (created - second) * 1000.
        return map(self._texts.__getitem__, seconds), map(
            mul, map(sub, times, seconds), repeat(1000)
        )

    def second_text(self, second: int) -> str:
        """A second's text, as :meth:`formatTime` writes it before the milliseconds."""
        return time.strftime(self.default_time_format, self.converter(second))

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        if datefmt is not None:
            return super().formatTime(record, datefmt)
        second = int(record.created)
        if second != self._second:
            self._text = self.second_text(second)
            self._second = second
        # As logging.Formatter's default_msec_format, "%s,%03d".
        return f"{self._text},{int(record.msecs):03d}"


class _Seconds(dict[int, str]):
    """Texts of seconds, each made on its first lookup (the few seconds of a batch, looked up
    once a line in C), :data:`KEPT_TIMES` at most kept."""

    def __init__(self, text: Callable[[int], str]):
        super().__init__()
        self._text = text

    def __missing__(self, second: int) -> str:
        if len(self) >= KEPT_TIMES:
            self.clear()
        text = self[second] = self._text(second)
        return text


class RequestIds(logging.Filter):
    """Puts the current request's id on every record, as ``request_id``."""

    def filter(self, record: logging.LogRecord) -> bool:
        # A record made after its request (the access log's) was given the request's id.
        if "request_id" not in record.__dict__:
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
    handler.setFormatter(json_formatter() if log_format == "json" else LineFormatter())
    logging.basicConfig(level=level.upper(), handlers=[handler])
    # The job scheduler says at info that it ran each of the engine's polls, every two
    # seconds: noise that buries the host's own lines. Its warnings and errors still show.
    logging.getLogger("apscheduler").setLevel(max(logging.WARNING, logging.root.level))
