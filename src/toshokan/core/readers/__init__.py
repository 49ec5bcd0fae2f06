"""Reader accounts, and telling which reader a request comes from."""

from toshokan.core.readers.accounts import AccountError, ReaderExists, Readers, koreader_key
from toshokan.core.readers.gate import ReaderGate

__all__ = ["AccountError", "ReaderExists", "ReaderGate", "Readers", "koreader_key"]
