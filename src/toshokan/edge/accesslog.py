"""One line per request, cheap enough to leave on: preformatted, buffered, escaped.

The stdlib logging machinery costs more per request than the rest of a
cached answer, so the edge writes its access lines itself: the timestamp is
formatted once a second, lines are joined and written in batches (at most a
fraction of a second late), and nothing is written when the
``toshokan.access`` logger is not enabled at info level. Only the path is
written, never the query string (page URLs of a protected library carry
their signature there) nor any header. Every character a client chose that
could end a line or fake a field (controls, quotes, backslashes, unprintable
code points) is escaped, so a client cannot forge log lines.
"""

import asyncio
import logging
import sys
import time
from collections.abc import Callable
from typing import Any

logger = logging.getLogger("toshokan.access")
#: Lines kept before a write; and the longest a line waits for one.
BATCH_LINES = 128
FLUSH_SECONDS = 0.25
MAX_PATH = 1000


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


class AccessLog:
    def __init__(self, write: Callable[[str], Any] | None = None):
        self._write = write
        self._lines: list[str] = []
        self._second = -1
        self._stamp = ""
        self._scheduled = False

    def enabled(self) -> bool:
        return logger.isEnabledFor(logging.INFO)

    def line(self, client: str, method: str, path: str, status: int, seconds: float) -> None:
        """One request's line. ``client`` and ``method`` come escaped: the server parsed the
        method as a token and the edge escapes a forwarded client address when it takes it."""
        now = time.time()
        second = int(now)
        if second != self._second:
            self._second = second
            self._stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(second))
        if len(path) > MAX_PATH:
            path = path[:MAX_PATH] + "..."
        self._lines.append(
            f'{self._stamp} INFO toshokan.access: {client} "{method} '
            f'{escaped(path)}" {status} {seconds * 1000:.1f}ms\n'
        )
        if len(self._lines) >= BATCH_LINES:
            self.flush()
        elif not self._scheduled:
            self._schedule()

    def _schedule(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        self._scheduled = True
        loop.call_later(FLUSH_SECONDS, self.flush)

    def flush(self) -> None:
        self._scheduled = False
        if not self._lines:
            return
        text = "".join(self._lines)
        self._lines.clear()
        write = self._write or sys.stderr.write
        try:
            write(text)
            if self._write is None:
                sys.stderr.flush()
        except (OSError, ValueError):
            pass  # a closed log stream must not fail requests
