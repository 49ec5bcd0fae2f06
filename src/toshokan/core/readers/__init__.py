"""Reader accounts, telling which reader a request comes from, and their sessions."""

from toshokan.core.readers.accounts import AccountError, ReaderExists, Readers, koreader_key
from toshokan.core.readers.gate import ReaderGate
from toshokan.core.readers.identify import (
    BY_CREDENTIALS,
    BY_HOST_SESSION,
    NotAReader,
    Signing,
    host_reader,
    reader_by,
)
from toshokan.core.readers.sessions import SESSION_COOKIE, SESSION_SECONDS, Sessions

__all__ = [
    "BY_CREDENTIALS",
    "BY_HOST_SESSION",
    "SESSION_COOKIE",
    "SESSION_SECONDS",
    "AccountError",
    "NotAReader",
    "ReaderExists",
    "ReaderGate",
    "Readers",
    "Sessions",
    "Signing",
    "host_reader",
    "koreader_key",
    "reader_by",
]
