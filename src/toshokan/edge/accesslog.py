"""One line per request through the ``toshokan.access`` logger: escaped, and cheap to leave on.

The line goes through :mod:`logging`, so it takes the host's format and an
operator can route it like any other (:mod:`toshokan.logs` formats and writes
the lines off the request path, in batches). Nothing is made when the logger
is not enabled at info level. Only the path is written, never the query
string (page URLs of a protected library carry their signature there) nor any
header; the request's id ends the line, as it is on the answer. Every
character a client chose that could end a line or fake a field (controls,
quotes, backslashes, unprintable code points) is escaped, so a client cannot
forge log lines. The line's parts are also fields of its record
(``client``, ``method``, ``path``, ``status``, ``ms``), which JSON lines
(:mod:`toshokan.logs`) carry as fields of their own.

On the request path the line costs extending a list: its parts (the time, the
request's fields, its id) are kept, and the log's writer thread makes the
record, escapes the path and hands the record to the logger's handlers
(:class:`toshokan.logs.Deferred`). Making a record the usual way looks up,
for every line, what is the same for every line: the caller's frame, file
and function, and the process's id (a system call). The access record is a
copy of one made the usual way once per thread (again in a forked process)
on the thread that answered, with only the time and the line's parts its
own: the same fields with the same values, none of those look-ups. With the
host's own handler and text format no record is made at all: the writer
thread writes the lines that format would, a batch at a time, each of their
fields for the whole batch at once and one format for all the lines
(:func:`_text`). What a replayed answer's lines say of its method, path and
status is made into text once, when the answer is kept (:func:`said`): each
of its lines adds only its time, client, duration and id to it.
"""

import asyncio
import logging
import os
from itertools import repeat
from operator import itemgetter, mul
from threading import get_ident
from typing import Any

from toshokan.logs import Deferred, Stamps

logger = logging.getLogger("toshokan.access")
MAX_PATH = 1000
#: What a line says of its request's method, path and status.
SAID = '"%s %s" %d'
#: A record's message: client, method, path, status, milliseconds, request id.
FORMAT = f"%s {SAID} %.1fms %s"
#: What a line says of its request: method, path, status, and their text in the line (the
#: writer thread makes it when it is ``None``).
Said = tuple[str, str, int, str | None]
#: Whether records name their asyncio task (Python 3.12 and later, unless turned off).
NAMES_TASKS: bool = getattr(logging, "logAsyncioTasks", False)


def escaped(text: str) -> str:
    """``text`` with every unprintable character, quote and backslash escaped."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return text
    return "".join(_escape(c) for c in text)


def _escape(char: str) -> str:
    if char.isprintable() and char not in '"\\':
        return char
    code = ord(char)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


#: When logging started, as records count ``relativeCreated`` from it.
_probe = logging.makeLogRecord({})
STARTED = _probe.created - _probe.relativeCreated / 1000
#: Per thread: the fields every access record made on it shares.
_templates: dict[int, dict[str, Any]] = {}
os.register_at_fork(after_in_child=_templates.clear)


def _template() -> dict[str, Any]:
    """The shared fields, from a record made the usual way (which ``line`` stands for)."""
    record = logger.makeRecord(logger.name, logging.INFO, __file__, 0, FORMAT, (), None, "line")
    record.lineno = AccessLog.line.__code__.co_firstlineno
    return dict(record.__dict__)


def said(method: str, path: str, status: int) -> Said:
    """What the line of every answer with this method, path and status says of it, its text
    made once: for an answer replayed many times."""
    return (method, path, status, SAID % (method, _shown(path), status))


class AccessLog:
    def line(
        self,
        client: str,
        method: str,
        path: str,
        status: int,
        seconds: float,
        request_id: bytes,
        ended: float,
    ) -> None:
        """One request's line, ending with its id (as its header carries it), for a request
        that ended at ``ended`` (``time.monotonic``: the writer thread makes it the wall time,
        so the request path reads no clock of its own for the line). ``client``,
        ``method`` and ``request_id`` come escaped: the server parsed the method as a token,
        the edge escapes a forwarded client address when it takes it and takes an inbound id
        only when it is sane. Nothing is kept while the access logger is not enabled at
        info."""
        self.line_said(client, (method, path, status, None), seconds, request_id, ended)

    def line_said(
        self, client: str, said: Said, seconds: float, request_id: bytes, ended: float
    ) -> None:
        """:meth:`line`, with what it says of the request's method, path and status as
        :func:`said` made it (once, for an answer replayed many times)."""
        # logger.isEnabledFor(INFO), without its call while the answer is in the logger's cache
        # (which logging empties in place whenever a level changes).
        if logger.disabled or not (_enabled_at.get(INFO) or _enabled(INFO)):
            return
        thread = get_ident()
        if thread not in _templates:
            _templates[thread] = _template()
        task = _task_name() if NAMES_TASKS else None
        # _KEPT.keep, in line: strings, bytes and numbers only, kept flat (the tuple is freed
        # at once), so lines waiting to be written never make the garbage collector walk them.
        _kept.extend((ended, thread, task, client, said, seconds, request_id))
        if not _KEPT.armed or len(_kept) > _MOST:
            _KEPT.kept_more()


def _text(columns: list[list[Any]], stamps: Stamps, head: str) -> str:
    """The lines of the access records of these requests' kept parts (a list each part, in
    the order :meth:`AccessLog.line_said` keeps them), for handlers that write
    nothing else of them (:meth:`toshokan.logs.BatchedLines.plain`): ``stamps`` gives each
    line's time as that handler writes it, ``head`` what comes between it and the message.

    Made a batch at a time, each step over every line at once in C: the batch's text is
    one join of every line's parts, each part set for every line at once (a slice of one
    list). That costs a fraction of making each line on its own, and less than one format
    for all the lines, which reads the format again for each line (about 1,200 of a
    line's 9,400 instructions more).
    """
    times, _, _, clients, saids, seconds, ids = columns
    texts = list(map(_SAID_TEXT, saids))
    # A set of the few texts a batch has (each hashed once, when made), so not every line is
    # compared with None: requests not replayed have theirs made here, once each.
    if None in set(texts):
        texts = [_said_text(s) if t is None else t for t, s in zip(texts, saids, strict=True)]
    stamped, msecs = stamps(times)
    count = len(times)
    # A line: time, ",", milliseconds, head, client, " ", said, " ", duration, "ms ", id,
    # and a line break but for the last line. The spaces are there from the start.
    parts = [" "] * (_PARTS * count)
    parts[0::_PARTS] = stamped
    parts[1::_PARTS] = [","] * count
    parts[2::_PARTS] = map(_MSECS.__getitem__, map(int, msecs))
    parts[3::_PARTS] = [head] * count
    parts[4::_PARTS] = clients
    parts[6::_PARTS] = texts
    parts[8::_PARTS] = map(_TENTHS, map(mul, seconds, repeat(1000)))
    parts[9::_PARTS] = ["ms "] * count
    # Decoded at once: an id is ASCII with no line break (made here, or a sane inbound one).
    parts[10::_PARTS] = b"\n".join(ids).decode().split("\n")
    parts[11::_PARTS] = ["\n"] * count
    parts.pop()
    return "".join(parts)


#: The parts of a line of :func:`_text`.
_PARTS = 12
#: A line's milliseconds as "%03d" writes them (a time's fraction may round up to 1000).
_MSECS = [f"{ms:03d}" for ms in range(1001)]
#: A line's duration as the record's "%.1fms" writes it: "%.1f" rounds as round(ms, 1)
#: does, the record's ms to the same digit.
_TENTHS = "%.1f".__mod__
_SAID_TEXT = itemgetter(3)


def _said_text(said: Said) -> str:
    method, path, status, _ = said
    return SAID % (method, _shown(path), status)


def _clean(text: str) -> bool:
    return text.isprintable() and '"' not in text and "\\" not in text


def _shown(path: str) -> str:
    """``path`` as its line shows it: cut at :data:`MAX_PATH`, escaped."""
    if len(path) > MAX_PATH:
        path = path[:MAX_PATH] + "..."
    return path if _clean(path) else escaped(path)


def _record(parts: tuple[Any, ...]) -> logging.LogRecord:
    """The access record of one request's kept parts."""
    now, thread, task, client, (method, path, status, _), seconds, request_id = parts
    path, ms, request_id = _shown(path), round(seconds * 1000, 1), request_id.decode()
    record = logging.LogRecord.__new__(logging.LogRecord)
    record.__dict__ = {
        **_templates[thread],
        "created": now,
        "msecs": int((now - int(now)) * 1000) + 0.0,
        "relativeCreated": (now - STARTED) * 1000,
        "args": (client, method, path, status, ms, request_id),
        "client": client,
        "method": method,
        "path": path,
        "status": status,
        "ms": ms,
        "request_id": request_id,
    }
    if NAMES_TASKS:
        record.taskName = task
    return record


#: The process's access lines, kept until the log's writer thread writes them.
_KEPT = Deferred(logger, _record, _text, width=7)
_kept = _KEPT.kept
_MOST = _KEPT.most
_enabled = logger.isEnabledFor
#: The logger's own cache of isEnabledFor's answers, by level (emptied in place, never replaced).
#: Read as an attribute: vars() would give the logger a dict of its own, which makes every
#: read of its attributes (``disabled``) slower.
_enabled_at: dict[int, bool] = logger._cache  # type: ignore[attr-defined]
INFO = logging.INFO


def _task_name() -> str | None:
    """The running asyncio task's name, as a record names it (Python 3.12 and later)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return None
    return task.get_name() if task is not None else None
