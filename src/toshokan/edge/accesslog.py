"""One line per request through the ``toshokan.access`` logger: escaped, and cheap to leave on.

The line goes through :mod:`logging`, so it takes the host's format and an
operator can route it like any other (:mod:`toshokan.logs` writes the lines
in batches). Nothing is formatted when the logger is not enabled at info
level. Only the path is written, never the query string (page URLs of a
protected library carry their signature there) nor any header. Every
character a client chose that could end a line or fake a field (controls,
quotes, backslashes, unprintable code points) is escaped, so a client
cannot forge log lines. The line's parts are also fields of its record
(``client``, ``method``, ``path``, ``status``, ``ms``), which JSON lines
(:mod:`toshokan.logs`) carry as fields of their own.
"""

import logging

logger = logging.getLogger("toshokan.access")
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
    def enabled(self) -> bool:
        return logger.isEnabledFor(logging.INFO)

    def line(self, client: str, method: str, path: str, status: int, seconds: float) -> None:
        """One request's line. ``client`` and ``method`` come escaped: the server parsed the
        method as a token and the edge escapes a forwarded client address when it takes it."""
        if len(path) > MAX_PATH:
            path = path[:MAX_PATH] + "..."
        path, ms = escaped(path), round(seconds * 1000, 1)
        logger.info(
            '%s "%s %s" %d %.1fms',
            client,
            method,
            path,
            status,
            ms,
            extra={"client": client, "method": method, "path": path, "status": status, "ms": ms},
        )
