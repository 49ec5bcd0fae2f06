"""Reader accounts, and telling which reader a request comes from."""

from toshokan.core.readers.accounts import AccountError, ReaderExists, Readers, koreader_key
from toshokan.core.readers.gate import ReaderGate
from toshokan.core.readers.identify import reader_of_headers

__all__ = [
    "AccountError",
    "ReaderExists",
    "ReaderGate",
    "Readers",
    "koreader_key",
    "reader_of_headers",
]
