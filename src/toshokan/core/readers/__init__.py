"""Reader accounts, telling which reader a request comes from, and their sessions."""

from toshokan.core.readers.accounts import AccountError, ReaderExists, Readers, koreader_key
from toshokan.core.readers.gate import ReaderGate
from toshokan.core.readers.identify import any_reader, host_reader, reader_of_headers
from toshokan.core.readers.sessions import SESSION_COOKIE, SESSION_SECONDS, Sessions

__all__ = [
    "SESSION_COOKIE",
    "SESSION_SECONDS",
    "AccountError",
    "ReaderExists",
    "ReaderGate",
    "Readers",
    "Sessions",
    "any_reader",
    "host_reader",
    "koreader_key",
    "reader_of_headers",
]
